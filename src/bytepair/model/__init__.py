"""Models: ByteModel, WordModel and Tokenizer, the encoder's front and its twin, and
the model file they write."""
