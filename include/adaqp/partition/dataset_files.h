// What a partition directory records of the dataset files it was made from, so that a partition is
// never reused after its dataset changed in place (same dataset.* keys, other contents). A worker
// reads only its part, not the dataset, so the dataset's fingerprint (computed from the loaded
// graph) cannot be compared at start-up; each file's size and a CRC-32 of its ends can, in a few
// milliseconds. A change that keeps a file's size and both its first and last MiB goes unseen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace adaqp {

struct DatasetFile {
  std::string path;       // relative to the dataset directory, '/'-separated
  int64_t bytes = 0;      // its size
  uint32_t ends_crc = 0;  // CRC-32 of its first kDatasetFileEndBytes and its last (the whole file
                          // when it is no larger than both)
};

constexpr int64_t kDatasetFileEndBytes = int64_t{1} << 20;
// More files than this are not recorded (a directory that large is hardly one dataset's).
constexpr size_t kMaxDatasetFiles = 4096;

// The files of `dir` a loader may read (sorted by path), each with its size and ends' CRC: every
// readable regular file under raw/ and split/ (the OGB layouts) and the .npy, .npz and .json files
// at its top (the NumPy and GraphSAINT layouts). Anything else there (a run's output, a partition,
// caches, notes) is not the dataset. nullopt when `dir` is empty, is not a directory or has more
// than kMaxDatasetFiles such files.
std::optional<std::vector<DatasetFile>> list_dataset_files(const std::string& dir);

// The first recorded file that is gone or differs from `now` (its name, what was recorded and what
// is there now, in words); empty when every recorded file is as it was. Files added since are not
// compared: the loaders read the files they read then.
std::string changed_dataset_file(const std::vector<DatasetFile>& recorded,
                                 const std::vector<DatasetFile>& now);

// The same between two copies of the dataset (partition.method ptscotch, where every rank reads
// its own): the first file of rank 0's `reference` that this rank's `copy` lacks or holds
// otherwise, else the first file only `copy` has, in words; empty when they agree.
std::string differing_dataset_copy(const std::vector<DatasetFile>& reference,
                                   const std::vector<DatasetFile>& copy);

}  // namespace adaqp
