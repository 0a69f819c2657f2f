"""The inference graph passes: rewrites of graphs bound for inference only
(``BoundGraph.for_training`` false), each registered under its module's ``NAME`` and
switched off by naming it in config ``disabled_graph_passes``.  Passes run in name order:

``eliminate_identity``     Dropout (outside ``mode='always'``), ``identity`` and
                           ``BlockGrad`` dropped: their readers read their input.
``fold_batch_norm``        a BatchNorm over a convolution's output folded into the
                           convolution: one ``_sg_mkldnn_conv`` node (``with_bn``).
``fuse_conv``              a convolution (or such a fused node) with the activation after
                           it, a sum with another array and the activation after the sum:
                           one ``_sg_mkldnn_conv`` node, a oneDNN convolution with
                           post-ops; a float32 CPU convolution alone, too.
``fuse_fully_connected``   FullyConnected and the activation after it: one
                           ``_sg_mkldnn_fully_connected`` node.
``inference_layout``       chains of convolutions on the channel-blocked layout oneDNN
                           wants on this CPU (``_FusedConv_ChannelBlocks``), with layout
                           changes only where a chain meets the rest of the graph.

The fused nodes are MXNet's (what ``optimize_for("MKLDNN")`` writes), so the optimized
symbol (``Executor.get_optimized_symbol``) loads in MXNet too -- except where
``inference_layout`` rewrote it: its nodes are dagnet's.
"""
