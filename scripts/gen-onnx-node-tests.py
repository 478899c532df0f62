#!/usr/bin/python3
"""Generates ONNX's backend node test cases (model.onnx + test_data_set_*/input_N.pb, output_N.pb)
into OUTDIR/node from the case generators of Debian's python3-onnx (onnx 1.12).

Usage: /usr/bin/python3 scripts/gen-onnx-node-tests.py OUTDIR

The generators use NumPy aliases (np.float, np.int, ...) that NumPy 1.24 removed; they are
restored before onnx is imported. The output is deterministic (the generators seed NumPy).
Sequence, map and optional values are written with onnx's own helpers (SequenceProto,
OptionalProto: `kiln onnx-test` reads them).
"""
import os
import shutil
import sys

import numpy as np

for alias, real in [("float", float), ("int", int), ("bool", bool), ("object", object),
                    ("complex", complex)]:
    if alias not in np.__dict__:
        setattr(np, alias, real)

import onnx.backend.test.case.node as node_cases  # noqa: E402
from onnx import numpy_helper  # noqa: E402


def serialize(value, info):
    t = info.type
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, info.name)
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, info.name)
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, info.name)
    return numpy_helper.from_array(value, info.name)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.join(sys.argv[1], "node")
    if os.path.exists(root):
        shutil.rmtree(root)
    cases = node_cases.collect_testcases(None)
    for case in cases:
        case_dir = os.path.join(root, case.name)
        if os.path.exists(case_dir):  # a name generated twice: the last one wins, as in onnx
            shutil.rmtree(case_dir)
        os.makedirs(case_dir)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data_dir = os.path.join(case_dir, "test_data_set_{}".format(i))
            os.makedirs(data_dir)
            for kind, values, infos in (("input", inputs, graph.input),
                                        ("output", outputs, graph.output)):
                for j, value in enumerate(values):
                    path = os.path.join(data_dir, "{}_{}.pb".format(kind, j))
                    with open(path, "wb") as f:
                        f.write(serialize(value, infos[j]).SerializeToString())
    print("gen-onnx-node-tests: {} cases in {}".format(len(os.listdir(root)), root))


if __name__ == "__main__":
    main()
