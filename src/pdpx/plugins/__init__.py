"""Built-in methods and outputs, registered through the public hooks."""
