#!/usr/bin/env bash
# Runs in every rank of an emulated cluster started with one --node-mem-limit size per
# node: the rank's memory cgroup must have the limit listed for its node (node<i> gets the
# i-th). The expected values are bytes, worked out by hand from the sizes the test passed
# (so that the tool's size parsing is checked too).
# Usage: check_node_mem.sh LIMIT_NODE0 LIMIT_NODE1 ...
set -euo pipefail
host=$(hostname)
fail() { echo "check_node_mem [$host]: FAIL: $*" >&2; exit 1; }

[[ $host =~ ^node([0-9]+)$ ]] || fail "hostname is not node<i>"
i=${BASH_REMATCH[1]}
((i < $#)) || fail "no expected limit for node$i ($# given)"
want=${*:i+1:1}

memcg=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
[[ -n $memcg && $memcg == */node$i ]] || fail "not in node$i's memory cgroup (in '$memcg')"
got=$(<"/sys/fs/cgroup/memory$memcg/memory.limit_in_bytes")
[[ $got == "$want" ]] || fail "memory.limit_in_bytes is $got, expected $want"
echo "check_node_mem [$host]: limit $got"
