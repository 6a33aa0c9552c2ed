// Shared pieces of the in-process layer tests.
#pragma once

#include "adaqp/comm/communicator.h"
#include "adaqp/common/error.h"

namespace adaqp::test {

// A communicator over the single rank of this test process (MPI initialised by the test binary).
Communicator& single_rank_comm();

}  // namespace adaqp::test
