"""Neural-network layers: dense and convolutional layers, activations, softmax and
the loss layers, pooling, normalization, dropout and embedding (MXNet's ``src/operator/nn``
and the legacy loss operators)."""
