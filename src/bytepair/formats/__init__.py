"""Files: loading model files, imports of Hugging Face and tiktoken tokenizers, exports to
other libraries (tokenizers, tiktoken, transformers directories) and training arrays."""
