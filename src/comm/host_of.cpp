#include "adaqp/comm/host_of.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <fstream>

namespace adaqp {
namespace {

constexpr size_t kKeyBytes = 256;

}  // namespace

std::string host_name() {
  std::array<char, HOST_NAME_MAX + 1> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

std::string host_key() {
  // The first network namespace has the same inode on every machine: the boot id tells machines
  // (cloned ones with one host name too) apart.
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  std::array<char, 128> ns{};
  const ssize_t n = readlink("/proc/self/ns/net", ns.data(), ns.size() - 1);
  return host_name() + " " + boot + " " +
         std::string(ns.data(), n > 0 ? static_cast<size_t>(n) : 0);
}

std::vector<int> number_hosts(const std::vector<std::string>& keys) {
  std::vector<int> host_of(keys.size(), 0);
  int hosts = 0;
  for (size_t r = 0; r < keys.size(); ++r) {
    size_t first = 0;
    while (keys[first] != keys[r]) ++first;
    host_of[r] = first == r ? hosts++ : host_of[first];
  }
  return host_of;
}

std::vector<int> host_of_ranks(Communicator& comm) {
  std::array<char, kKeyBytes> mine{};
  const std::string key = host_key();
  std::memcpy(mine.data(), key.data(), std::min(key.size(), kKeyBytes - 1));
  std::vector<char> all(kKeyBytes * static_cast<size_t>(comm.size()));
  comm.allgather(mine.data(), all.data(), kKeyBytes);
  std::vector<std::string> keys;
  for (int r = 0; r < comm.size(); ++r) keys.emplace_back(all.data() + kKeyBytes * r);
  return number_hosts(keys);
}

}  // namespace adaqp
