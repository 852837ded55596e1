// IDX files (MNIST's format), plain or gzipped: the header's rank, type and sizes against the
// bytes that follow.
#include <zlib.h>

#include "engine/data/idx_reader.hpp"
#include "tests/fuzz/fuzz_target.hpp"

ENGINE_FUZZ_TARGET(idx) {
  engine::fuzz::Bytes in(data, size);
  const bool gzipped = in.flag();
  const std::string body = in.rest();
  const std::string path = engine::fuzz::scratch_dir() + (gzipped ? "/input.idx.gz" : "/input.idx");
  if (gzipped) {
    gzFile file = gzopen(path.c_str(), "wb");
    gzwrite(file, body.data(), static_cast<unsigned>(body.size()));
    gzclose(file);
  } else {
    engine::fuzz::write_file(path, body.data(), body.size());
  }
  const auto tensor = engine::data::read_idx(path);
  if (tensor.numel() > 0) (void)tensor.flatten()[-1].item<double>();  // touches the last element
}
