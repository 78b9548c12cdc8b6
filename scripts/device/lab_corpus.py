"""Copies the machine image's package copyright files into DIR as the
h200-lab workload's corpus, leaving out those that are not UTF-8
(nsight-compute's, on that image), which the data prep refuses.

  python3 lab_corpus.py DIR
"""

import glob
import os
import shutil
import sys


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for i, path in enumerate(sorted(glob.glob("/usr/share/doc/*/copyright"))):
        try:
            with open(path, encoding="utf-8") as f:
                f.read()
        except (UnicodeDecodeError, OSError):
            print("corpus: left out", path)
            continue
        shutil.copy(path, os.path.join(out, f"{i:04d}.txt"))


if __name__ == "__main__":
    main()
