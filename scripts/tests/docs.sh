#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The documentation check (make check): every ethtool -S counter, module
# parameter and devlink parameter is documented, every .rst parses with
# docutils (python3-docutils) without a warning, the driver's page and
# README stay short; with a self-test against a negative case. The work is
# in docs.py; this prints its lines and returns its status.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 "$top/scripts/tests/docs.py" "$top"
