"""Tests of the plugin mechanism; a package, so its module names cannot clash with other folders."""
