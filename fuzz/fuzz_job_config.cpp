// Fuzzes the job configuration parser: the input is the text of a YAML job file.
#include <cstddef>
#include <cstdint>

#include "adaqp/common/error.h"
#include "adaqp/config/job_config.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = adaqp::fuzz::scratch_dir() / "job.yaml";
  adaqp::fuzz::write_file(path, data, size);
  try {
    const adaqp::JobConfig cfg = adaqp::load_job_config(path.string());
    // A loaded config prints back to YAML that loads to the same config.
    const std::string yaml = adaqp::to_yaml(cfg);
    adaqp::fuzz::write_file(path, yaml);
    if (adaqp::to_yaml(adaqp::load_job_config(path.string())) != yaml)
      throw std::logic_error("to_yaml does not round-trip:\n" + yaml);
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
  }
  return 0;
}
