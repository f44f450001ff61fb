"""`python -m envdoctor ARGS`: envdoctor ARGS, examining this interpreter's environment."""
import sys

from envdoctor import main

if __name__ == "__main__":
    try:
        main()
    except FileNotFoundError as e:
        sys.stderr.write(str(e) + "\n")
        sys.exit(2)
