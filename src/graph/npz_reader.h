// Streaming the .npy members of a .npz archive (libzip): numpy.savez (members stored),
// numpy.savez_compressed and scipy.sparse.save_npz (members deflated). Shared by the GraphSAINT
// layout (adj_full.npz) and the OGB binary layout (raw/data.npz, raw/node-label.npz).
#pragma once

#include <zip.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/npy.h"

namespace adaqp {

struct ZipDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileClose {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

// A .npy member of a .npz archive, read front to back (a deflated member cannot seek): its header
// at once, then its elements in order; finish() checks that nothing follows them, which makes
// libzip compare the member's CRC-32.
class NpzMember {
 public:
  // `crc`: the member's CRC-32 as the archive records it (ZIP_STAT_CRC), or -1 if it records none.
  NpzMember(std::string path, std::string where, zip_file_t* file, uint64_t size, bool compressed,
            int64_t crc);

  const NpyArray& array() const { return header_.array; }  // dtype and shape (no payload)
  int64_t elements() const { return header_.elements; }
  bool compressed() const { return compressed_; }

  // The next `count` elements (count * item_size bytes) into `out`.
  void read(int64_t count, std::vector<uint8_t>& out);
  // Passes over the next `count` elements: a seek in a stored member (libzip then checks no CRC-32:
  // it covers only a member read whole), decompressed and dropped in a deflated one.
  void skip(int64_t count);
  // Reading past the end makes libzip compare the CRC-32 of what was decompressed.
  void finish();
  // finish() for the second of two copies of one member read side by side, this one from where
  // `head` (the first copy, read from the start and never finished) stopped: for a stored member,
  // whose CRC-32 libzip checks only over a read without seeks, compares the CRC-32 of both reads
  // together with the archive's (a deflated one this copy decompressed whole: finish() checks it).
  void finish_after(const NpzMember& head);

 private:
  static constexpr uint64_t kPreamble = 12;  // magic, version and a 4-byte header length

  void read_bytes(uint8_t* dst, uint64_t n);

  std::string path_, where_;
  std::unique_ptr<zip_file_t, ZipFileClose> file_;
  uint64_t size_ = 0, done_ = 0;
  bool compressed_ = false;
  NpyHeader header_;
  std::vector<uint8_t> pending_;
  // Stored members: the CRC-32 of the bytes read from crc_from_ (0, or where the last seek went)
  // up to done_; the archive's, or -1.
  uint32_t crc_ = 0;
  uint64_t crc_from_ = 0;
  int64_t recorded_crc_ = -1;
};

// Read-only access to the .npy members of a .npz archive. `members` says which members the
// archive should hold, for the errors of an empty archive and of a missing member.
class NpzReader {
 public:
  NpzReader(std::string path, std::string members);

  // The member `name` ("indptr.npy") opened for reading, its header parsed; errors name the
  // archive and the member. A member may be open more than once, each copy read on its own.
  NpzMember open(const std::string& name) const;

  // A small member read whole.
  NpyArray member(const std::string& name) const;

  // Whether the archive holds member `name`.
  bool has(const std::string& name) const;

 private:
  std::string path_, members_;
  uint64_t archive_size_ = 0;
  std::unique_ptr<zip_t, ZipDiscard> zip_;
};

// A member's first bad value, reported once the member has been read to its end, so that a corrupt
// archive is reported as such (libzip's CRC check) rather than by a value it garbled.
class FirstBadValue {
 public:
  explicit FirstBadValue(std::string path) : path_(std::move(path)) {}
  void note(const std::string& where, const std::string& what) {
    if (where_.empty()) {
      where_ = where;
      what_ = what;
    }
  }
  bool any() const { return !where_.empty(); }
  void report() const {
    if (any()) throw InputError(path_, where_, what_);
  }

 private:
  std::string path_, where_, what_;
};

// InputError: member `member` ("shape.npy") of the archive at `path` has not the dtype and shape
// described by `want`.
[[noreturn]] void bad_member(const std::string& path, const std::string& member, const NpyArray& a,
                             const std::string& want);

}  // namespace adaqp
