#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# crypto offload with ipsec_flows=0 against a software-ESP peer: see
# ipsec_matrix.inc.
# shellcheck disable=SC2034 # TYPE and FLOWS: read by ipsec_matrix.inc
TYPE=crypto
# shellcheck disable=SC2034
FLOWS=0
source "$(dirname "$0")/ipsec_matrix.inc"
