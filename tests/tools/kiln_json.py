"""Shared by the tool tests: runs a `kiln` subcommand with --json and parses its output."""
import json
import subprocess
import sys

NO_DEVICE = 77  # ctest: skipped


def run_json(kiln: str, args: list):
    """(document, failures) of `kiln ARGS`; (None, []) when there is no Vulkan device.

    stderr is passed through; a non-zero exit is the first failure; a document that does not
    parse raises (which fails the test). The time limit is ctest's (TIMEOUT, which ends the
    whole process tree): longer in sanitizer builds."""
    proc = subprocess.run([kiln] + args, capture_output=True, text=True)
    if "no Vulkan device" in proc.stderr:
        print("skipped:", proc.stderr.strip())
        return None, []
    sys.stderr.write(proc.stderr)
    doc = json.loads(proc.stdout)
    failures = []
    if proc.returncode != 0:
        failures.append(f"kiln {args[0]} exited with {proc.returncode}")
    return doc, failures
