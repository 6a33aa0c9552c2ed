// Which ranks share a host. A host is one network stack: the machine (host name and boot id) and
// the network namespace of the process, so that the hosts of scripts/vcluster.sh (namespaces of
// one machine, whose traffic crosses shaped links) count as separate hosts, and the ranks of one
// machine (or of one vcluster host, --ranks-per-host) as one. The adaptive scheme models the links
// between ranks of one host and those between hosts as two classes (assign/time_model.h).
#pragma once

#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"

namespace adaqp {

// This machine's host name ("" where it cannot be read).
std::string host_name();

// This process's host key: "<host name> <boot id> <network namespace>" (the boot id of
// /proc/sys/kernel/random/boot_id, the namespace as /proc/self/ns/net names it; each empty where
// it cannot be read).
std::string host_key();

// host_of[r]: rank r's host among keys[0..world), numbered in the order of their first rank.
std::vector<int> number_hosts(const std::vector<std::string>& keys);

// Collective: number_hosts of every rank's host_key() (keys are cut at 255 bytes).
std::vector<int> host_of_ranks(Communicator& comm);

}  // namespace adaqp
