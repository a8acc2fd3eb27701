"""``python -m sightline._window ARGS``: the window of ``sightline.show``, in a process of its
own. ``ARGS`` is one JSON object: ``files``, ``compare``, ``ranks``, ``ncu``, ``no_cache``."""

import json
import sys

from . import _sightline


def main(argv):
    spec = json.loads(argv[0])
    try:
        _sightline.window(spec["files"], spec["compare"], spec["ranks"], spec["ncu"], spec["no_cache"])
    except _sightline.SightlineError as e:
        print(f"sightline: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
