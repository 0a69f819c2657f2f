"""MXNet's ``contrib`` operators (``src/operator/contrib``): resizing, region-of-interest
pooling and alignment, detection proposals, masking and quantization, registered under
their ``_contrib_`` names (``mx.nd.contrib.<name>``)."""
