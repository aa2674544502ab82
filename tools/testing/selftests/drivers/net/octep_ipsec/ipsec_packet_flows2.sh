#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# packet offload with ipsec_flows=2 against a software-ESP peer: see
# ipsec_matrix.inc.
TYPE=packet
FLOWS=2
source "$(dirname "$0")/ipsec_matrix.inc"
