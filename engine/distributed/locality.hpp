// Which ranks share a machine, found from facts when the scheduler does not say (Kubeflow's
// PyTorchJob sets only RANK and WORLD_SIZE; Slurm without --ntasks-per-node no local size):
// every rank publishes its host identity through the rendezvous store, and a rank's local rank
// is its place among the ranks of the same identity.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/distributed/world.hpp"

namespace engine::distributed {

// This machine's address on the route to host:port ("192.168.77.2"), chosen by the kernel's
// routing for a UDP socket (connect sends nothing); "" when the host does not resolve or
// nothing routes there.
std::string address_towards(const std::string& host, int port);

// This machine as the ranks of a world tell machines apart: its host name and the address it
// reaches the rendezvous from, so that two network namespaces or containers on one computer,
// which other machines reach at two addresses, are two machines.
std::string host_identity(const World& world);

struct Locality {
  int local_rank = 0;
  int local_size = 1;
};

// A rank's place among the ranks of its identity (ordered by rank) and how many they are.
Locality locality_from_hosts(const std::vector<std::string>& hosts, int rank);

}  // namespace engine::distributed
