#!/usr/bin/env python3
"""Extract the text of a PDF file.

Usage: extract.py <file.pdf> [--pages N]

Prints its arguments and working directory as JSON (test fixture).
"""
import json
import os
import sys

print(json.dumps({"args": sys.argv[1:], "cwd": os.getcwd()}))
