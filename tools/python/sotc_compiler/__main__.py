"""python -m sotc_compiler ARGS: the same as the `sotc` command."""
from sotc_compiler import main

main()
