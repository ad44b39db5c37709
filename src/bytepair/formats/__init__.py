"""Files: loading model files, exports to other libraries and training arrays."""
