#!/usr/bin/python3
"""The referee for envdoctor's machine outputs: Debian's python3-jsonschema.

Usage: validate_schema.py SCHEMA DOCUMENT
       validate_schema.py --serve
The first form checks SCHEMA against its own metaschema, then DOCUMENT against SCHEMA; prints one
line per error (the JSON path, then jsonschema's message) and exits 1 on any, 0 when the document
holds. The second answers the same question for many documents, one process for a whole test
(tests/support/schema.cc): each request on stdin is the schema's path on a line, the document's
length in bytes on a line, then the document; each answer on stdout is the length in bytes of the
error lines, on a line, then those lines (none when the document holds).
"""
import json
import sys

import jsonschema

_validators = {}


def errors(schema_path, document_text):
    """The error lines of document_text against the schema at schema_path ("" when it holds)."""
    if schema_path not in _validators:
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
        validator = jsonschema.validators.validator_for(schema)
        validator.check_schema(schema)
        _validators[schema_path] = validator(schema)
    document = json.loads(document_text)
    found = sorted(_validators[schema_path].iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return "".join(("/".join(map(str, e.absolute_path)) or "(document)") + " : " + e.message + "\n" for e in found)


def serve():
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while True:
        schema_path = requests.readline()
        if not schema_path:
            return
        size = int(requests.readline())
        document = requests.read(size)
        try:
            text = errors(schema_path.decode("utf-8").rstrip("\n"), document.decode("utf-8"))
        except Exception as e:  # a document that is not JSON, a schema that is not one: the answer says so
            text = "(document) : %s: %s\n" % (type(e).__name__, e)
        # A message may quote a lone surrogate the document escaped ("\udc80"), which UTF-8 cannot hold.
        answer = text.encode("utf-8", "backslashreplace")
        answers.write(b"%d\n" % len(answer) + answer)
        answers.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
        sys.exit(0)
    with open(sys.argv[2], encoding="utf-8") as f:
        text = errors(sys.argv[1], f.read())
    sys.stdout.write(text)
    sys.exit(1 if text else 0)
