#!/usr/bin/python3
"""The referee for envdoctor's machine outputs: Debian's python3-jsonschema.

Usage: validate_schema.py SCHEMA DOCUMENT
Checks SCHEMA against its own metaschema, then DOCUMENT against SCHEMA; prints one line per
error (the JSON path, then jsonschema's message) and exits 1 on any, 0 when the document holds.
"""
import json
import sys

import jsonschema

with open(sys.argv[1], encoding="utf-8") as f:
    schema = json.load(f)
with open(sys.argv[2], encoding="utf-8") as f:
    document = json.load(f)
validator = jsonschema.validators.validator_for(schema)
validator.check_schema(schema)
errors = sorted(validator(schema).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
for e in errors:
    print("/".join(map(str, e.absolute_path)) or "(document)", ":", e.message)
sys.exit(1 if errors else 0)
