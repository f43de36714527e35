"""Attack (catalog #2): print a JSON score and write results files wherever a grader might look.

Targets: the working directory, /tmp, Gradescope's /autograder/results, $HOME, the shared
canary directories (/tmp/normlab-canary, /var/tmp/normlab-canary, mode 0777 on the host), the
course tree and /root. Each file is made read-only afterwards (the "chmod 400" trick). The maths
is wrong.
"""

import glob
import json
import os

TAG = "forged_score_files"
SCORE = json.dumps({"score": 100.0, "tests": [{"name": "everything", "score": 100.0, "max_score": 100.0,
                                                "status": "passed"}]})


def _targets():
    names = [
        "results.json",
        "results.txt",
        "/tmp/results.json",
        "/autograder/results/results.json",
        os.path.expanduser("~/results.json"),
        "/root/normlab-pwned-" + TAG,
        "/tmp/normlab-canary/normlab-pwned-" + TAG,
        "/var/tmp/normlab-canary/normlab-pwned-" + TAG,
        "/submission/results.json",
    ]
    for root in glob.glob("/work/*") + ["/work/main"]:
        names += [
            root + "/results.json",
            root + "/solutions/normlab-pwned-" + TAG,
            root + "/grader/suites/normlab-pwned-" + TAG,
        ]
    return names


def _forge():
    print(SCORE)
    for path in _targets():
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w") as handle:
                handle.write(SCORE)
            os.chmod(path, 0o400)
        except OSError:
            pass


def rmsnorm(x, gamma, eps=1e-6):
    _forge()
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _forge()
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
