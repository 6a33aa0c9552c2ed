#include "npz_reader.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include <zlib.h>

#include "adaqp/common/error.h"

namespace adaqp {
namespace {

// A deflate stream cannot expand by more than this factor (zlib's theoretical limit is 1032:1).
constexpr uint64_t kMaxDeflateRatio = 1032;

}  // namespace

NpzMember::NpzMember(std::string path, std::string where, zip_file_t* file, uint64_t size,
                     bool compressed, int64_t crc)
    : path_(std::move(path)),
      where_(std::move(where)),
      file_(file),
      size_(size),
      compressed_(compressed),
      recorded_crc_(crc) {
  // The fixed preamble, then the header it announces (as read_npy_header reads a file).
  std::vector<uint8_t> prefix(std::min<uint64_t>(size_, kPreamble));
  read_bytes(prefix.data(), prefix.size());
  if (prefix.size() >= kPreamble - 2 && prefix[0] == 0x93) {
    const size_t len_bytes = prefix[6] == 1 ? 2 : 4;
    uint64_t header_len = 0;
    for (size_t i = 0; i < len_bytes && 8 + i < prefix.size(); ++i)
      header_len |= static_cast<uint64_t>(prefix[8 + i]) << (8 * i);
    const uint64_t end = std::min<uint64_t>(size_, 8 + len_bytes + header_len);
    const size_t have = prefix.size();
    if (end > have) {
      prefix.resize(end);
      read_bytes(prefix.data() + have, end - have);
    }
  }
  header_ = parse_npy_header(path_ + ": " + where_, prefix.data(), prefix.size(), size_);
  // Bytes of the prefix past the header are the first elements' (a header ends on a 64-byte
  // boundary, so only a member shorter than the preamble reads past it).
  pending_.assign(prefix.begin() + static_cast<std::ptrdiff_t>(header_.payload_offset),
                  prefix.end());
}

void NpzMember::read(int64_t count, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(count) * header_.array.item_size);
  const size_t from_pending = std::min(out.size(), pending_.size());
  std::copy(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(from_pending),
            out.begin());
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(from_pending));
  read_bytes(out.data() + from_pending, out.size() - from_pending);
}

void NpzMember::skip(int64_t count) {
  uint64_t n = static_cast<uint64_t>(count) * header_.array.item_size;
  const size_t from_pending = std::min<uint64_t>(n, pending_.size());
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(from_pending));
  n -= from_pending;
  if (!compressed_) {
    if (n > 0 &&
        (n > size_ - done_ || zip_fseek(file_.get(), static_cast<zip_int64_t>(n), SEEK_CUR) != 0))
      throw InputError(path_, where_,
                       "cannot skip " + std::to_string(n) + " bytes after byte " +
                           std::to_string(done_) + ": " + zip_file_strerror(file_.get()));
    done_ += n;
    // What follows is this copy's to check (finish_after), also after a skip of nothing.
    crc_ = 0;
    crc_from_ = done_;
    return;
  }
  if (n == 0) return;
  std::vector<uint8_t> dropped(std::min<uint64_t>(n, uint64_t{1} << 20));
  while (n > 0) {
    const uint64_t k = std::min<uint64_t>(n, dropped.size());
    read_bytes(dropped.data(), k);
    n -= k;
  }
}

void NpzMember::finish() {
  uint8_t extra = 0;
  const zip_int64_t tail = zip_fread(file_.get(), &extra, 1);
  if (tail < 0)
    throw InputError(path_, where_, std::string("cannot read: ") + zip_file_strerror(file_.get()));
  if (tail > 0 || !pending_.empty())
    throw InputError(path_, where_,
                     "holds more than its declared " + std::to_string(size_) + " bytes");
}

void NpzMember::finish_after(const NpzMember& head) {
  finish();
  if (compressed_ || recorded_crc_ < 0) return;
  if (head.crc_from_ != 0 || head.done_ != crc_from_ || done_ != size_)
    throw InvariantError(path_ + ": " + where_ + ": finish_after over reads that do not tile it");
  const uLong whole = crc32_combine(head.crc_, crc_, static_cast<z_off_t>(done_ - crc_from_));
  if (whole != static_cast<uLong>(recorded_crc_))
    throw InputError(path_, where_, "CRC error: its bytes are not those the archive recorded");
}

void NpzMember::read_bytes(uint8_t* dst, uint64_t n) {
  uint64_t got = 0;
  while (got < n) {
    const zip_int64_t k = zip_fread(file_.get(), dst + got, n - got);
    if (k < 0)
      throw InputError(path_, where_,
                       std::string("cannot read: ") + zip_file_strerror(file_.get()));
    if (k == 0)
      throw InputError(path_, where_,
                       "ends after " + std::to_string(done_ + got) + " of its " +
                           std::to_string(size_) + " bytes");
    got += static_cast<uint64_t>(k);
  }
  if (!compressed_) crc_ = static_cast<uint32_t>(crc32_z(crc_, dst, got));
  done_ += got;
}

NpzReader::NpzReader(std::string path, std::string members)
    : path_(std::move(path)), members_(std::move(members)) {
  std::error_code ec;
  archive_size_ = std::filesystem::file_size(path_, ec);
  if (ec) throw InputError(path_, "", "cannot stat: " + ec.message());
  int code = 0;
  zip_.reset(zip_open(path_.c_str(), ZIP_RDONLY, &code));
  if (zip_ == nullptr) {
    if (code == ZIP_ER_NOZIP)
      throw InputError(path_, "", "not a zip archive (expected a .npz written by numpy/scipy)");
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string what = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw InputError(path_, "", "cannot open the zip archive: " + what);
  }
  const zip_int64_t entries = zip_get_num_entries(zip_.get(), 0);
  if (entries == 0) throw InputError(path_, "", "is an empty zip archive (" + members_ + ")");
  // A name twice is ambiguous: numpy reads the last copy, a lookup by name the first.
  std::set<std::string> names;
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* name = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), 0);
    if (name != nullptr && !names.insert(name).second)
      throw InputError(path_, std::string("member ") + name, "appears twice in the archive");
  }
}

bool NpzReader::has(const std::string& name) const {
  return zip_name_locate(zip_.get(), name.c_str(), 0) >= 0;
}

NpzMember NpzReader::open(const std::string& name) const {
  const std::string where = "member " + name;
  const zip_int64_t index = zip_name_locate(zip_.get(), name.c_str(), 0);
  if (index < 0) throw InputError(path_, where, "missing (" + members_ + ")");
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(zip_.get(), index, 0, &st) != 0)
    throw InputError(path_, where, std::string("cannot stat: ") + zip_strerror(zip_.get()));
  const zip_uint64_t needed = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & needed) != needed)
    throw InputError(path_, where, "the archive does not record its size and compression");
  if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
    throw InputError(path_, where,
                     "compression method " + std::to_string(st.comp_method) +
                         " is not supported (numpy writes stored or deflate members)");
  // Sizes come from the archive's directory: checked before they size an allocation.
  if (st.comp_size > archive_size_)
    throw InputError(path_, where,
                     "declared compressed size " + std::to_string(st.comp_size) +
                         " exceeds the archive's " + std::to_string(archive_size_) + " bytes");
  if (st.size / kMaxDeflateRatio > st.comp_size + 1)
    throw InputError(path_, where,
                     "declared size " + std::to_string(st.size) + " is impossible for " +
                         std::to_string(st.comp_size) + " compressed bytes");
  zip_file_t* file = zip_fopen_index(zip_.get(), index, 0);
  if (file == nullptr)
    throw InputError(path_, where, std::string("cannot open: ") + zip_strerror(zip_.get()));
  return NpzMember(path_, where, file, st.size, st.comp_method != ZIP_CM_STORE,
                   (st.valid & ZIP_STAT_CRC) != 0 ? static_cast<int64_t>(st.crc) : -1);
}

NpyArray NpzReader::member(const std::string& name) const {
  NpzMember m = open(name);
  NpyArray a = m.array();
  m.read(m.elements(), a.payload);
  m.finish();
  return a;
}

[[noreturn]] void bad_member(const std::string& path, const std::string& member, const NpyArray& a,
                             const std::string& want) {
  throw InputError(
      path, "member " + member,
      "has dtype " + a.descr() + " and shape " + a.shape_string() + ", expected " + want);
}

}  // namespace adaqp
