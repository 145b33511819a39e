"""What every part of cbai agrees on: the error hierarchy, the ask/tell protocol, the table
of options with their checks, the validators of single fields, the holders whose arrays stay
read-only through pickling, and the plugin loader."""
