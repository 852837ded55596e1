#include "engine/data/caffe_lmdb.hpp"

#include <filesystem>

#include "engine/core/errors.hpp"

#ifdef ENGINE_WITH_CAFFE_LMDB
#include <lmdb.h>

#include "caffe_datum.pb.h"  // generated from engine/data/caffe_datum.proto
#endif

namespace engine::data {

#ifdef ENGINE_WITH_CAFFE_LMDB

namespace {

void check(int rc, const std::string& what) {
  if (rc != MDB_SUCCESS) throw core::IoError(what + ": " + mdb_strerror(rc));
}

// A read-only transaction, aborted when it goes out of scope unless committed.
class ReadTransaction {
 public:
  ReadTransaction(MDB_env* env, const std::string& root) {
    check(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn_), root);
  }
  ~ReadTransaction() {
    if (txn_) mdb_txn_abort(txn_);
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  MDB_txn* get() const { return txn_; }
  void commit() {
    mdb_txn_commit(txn_);
    txn_ = nullptr;
  }

 private:
  MDB_txn* txn_ = nullptr;
};

// The record's image as C x H x W uint8 in the source's colour mode; name() names the record
// in an error.
template <typename Name>
torch::Tensor datum_image(const caffe::Datum& datum, ColorMode mode, const Name& name) {
  if (datum.encoded()) {
    const auto& bytes = datum.data();
    return decode_image(std::vector<uint8_t>(bytes.begin(), bytes.end()), mode, name());
  }
  if (datum.data().empty() && datum.float_data_size() > 0) {
    throw core::DataError(name() +
                          ": float_data pixels; the engine reads uint8 pixels (data) or "
                          "encoded images only");
  }
  const int64_t c = datum.channels(), h = datum.height(), w = datum.width();
  if (c != 1 && c != 3) {
    throw core::DataError(name() + ": " + std::to_string(c) + " channels; images have 1 or 3");
  }
  if (h <= 0 || w <= 0 || static_cast<int64_t>(datum.data().size()) != c * h * w) {
    throw core::DataError(name() + ": " + std::to_string(datum.data().size()) +
                          " pixel bytes for a " + std::to_string(c) + " x " + std::to_string(h) +
                          " x " + std::to_string(w) + " image");
  }
  auto image =
      torch::from_blob(const_cast<char*>(datum.data().data()), {c, h, w}, torch::kUInt8).clone();
  if (c == 3) image = image.flip(0);  // Caffe stores colour as BGR
  if (mode == ColorMode::kGray && c == 3) {
    static const auto weights =
        torch::tensor({0.299, 0.587, 0.114}, torch::kFloat32).view({3, 1, 1});
    image = (image.to(torch::kFloat32) * weights).sum(0, true).round().to(torch::kUInt8);
  } else if (mode == ColorMode::kRgb && c == 1) {
    image = image.expand({3, h, w}).contiguous();
  }
  return image;
}

}  // namespace

struct CaffeLmdbSource::Database {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  ~Database() {
    if (env) mdb_env_close(env);
  }
};

CaffeLmdbSource::CaffeLmdbSource(std::string root, ColorMode mode)
    : root_(std::move(root)), mode_(mode), database_(std::make_unique<Database>()) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(std::filesystem::path(root_) / "data.mdb", error)) {
    throw core::IoError("caffe_lmdb: " + root_ +
                        " is not an LMDB database (a folder holding data.mdb)");
  }
  const std::string what = "caffe_lmdb: " + root_;
  const auto open = [&](unsigned flags) {
    check(mdb_env_create(&database_->env), what);
    const int rc = mdb_env_open(database_->env, root_.c_str(), flags, 0664);
    if (rc != MDB_SUCCESS) {  // LMDB: an environment that failed to open is closed, not reused
      mdb_env_close(database_->env);
      database_->env = nullptr;
    }
    return rc;
  };
  int rc = open(MDB_RDONLY | MDB_NOTLS);
  if (rc == EACCES || rc == EROFS) {  // a read-only folder: no lock file can be made there
    rc = open(MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK);
  }
  check(rc, what);
  ReadTransaction txn(database_->env, what);
  check(mdb_dbi_open(txn.get(), nullptr, 0, &database_->dbi), what);
  MDB_cursor* cursor = nullptr;
  check(mdb_cursor_open(txn.get(), database_->dbi, &cursor), what);
  MDB_val key, value;
  while (mdb_cursor_get(cursor, &key, &value, MDB_NEXT) == MDB_SUCCESS) {
    keys_.emplace_back(static_cast<const char*>(key.mv_data), key.mv_size);
  }
  mdb_cursor_close(cursor);
  txn.commit();  // keeps the database handle open for the gathers' transactions
  if (keys_.empty()) throw core::DataError(what + " holds no record");
}

CaffeLmdbSource::~CaffeLmdbSource() = default;

Batch CaffeLmdbSource::gather(const torch::Tensor& indices) const {
  const auto index = indices.accessor<int64_t, 1>();
  ReadTransaction txn(database_->env, "caffe_lmdb: " + root_);
  Batch batch;
  std::vector<int64_t> targets;
  caffe::Datum datum;
  for (int64_t i = 0; i < index.size(0); ++i) {
    const std::string& key = keys_.at(static_cast<size_t>(index[i]));
    // the record's name, made only for an error (gather runs per sample on the loader's threads)
    const auto what = [&] { return "caffe_lmdb: " + root_ + ", record '" + key + "'"; };
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
    const int rc = mdb_get(txn.get(), database_->dbi, &k, &v);
    if (rc != MDB_SUCCESS) check(rc, what());
    if (!datum.ParseFromArray(v.mv_data, static_cast<int>(v.mv_size))) {
      throw core::DataError(what() + " is not a Caffe Datum");
    }
    batch.samples.push_back(datum_image(datum, mode_, what));
    targets.push_back(datum.label());
  }
  batch.target = torch::tensor(targets, torch::kInt64);
  batch.indices = indices.clone();
  return batch;
}

std::string CaffeLmdbSource::describe() const {
  return "caffe_lmdb(" + root_ + ", " + std::to_string(size()) + " records)";
}

bool caffe_lmdb_available() {
  return true;
}

void write_caffe_lmdb(const std::string& root, const std::vector<torch::Tensor>& images,
                      const std::vector<int64_t>& labels, bool encode) {
  if (images.size() != labels.size()) {
    throw core::UsageError("caffe_lmdb: " + std::to_string(images.size()) + " images and " +
                           std::to_string(labels.size()) + " labels");
  }
  std::filesystem::create_directories(root);
  MDB_env* env = nullptr;
  const std::string what = "caffe_lmdb: writing " + root;
  check(mdb_env_create(&env), what);
  std::unique_ptr<MDB_env, void (*)(MDB_env*)> owned(env, mdb_env_close);
  check(mdb_env_set_mapsize(env, size_t{1} << 30), what);
  check(mdb_env_open(env, root.c_str(), 0, 0664), what);
  MDB_txn* txn = nullptr;
  check(mdb_txn_begin(env, nullptr, 0, &txn), what);
  // aborted on any error before the commit, so the environment closes with no transaction open
  std::unique_ptr<MDB_txn, void (*)(MDB_txn*)> open_txn(txn, mdb_txn_abort);
  MDB_dbi dbi = 0;
  check(mdb_dbi_open(txn, nullptr, 0, &dbi), what);
  for (size_t i = 0; i < images.size(); ++i) {
    const auto image = images[i].contiguous();
    caffe::Datum datum;
    datum.set_channels(static_cast<int32_t>(image.size(0)));
    datum.set_height(static_cast<int32_t>(image.size(1)));
    datum.set_width(static_cast<int32_t>(image.size(2)));
    datum.set_label(static_cast<int32_t>(labels[i]));
    if (encode) {
      const auto png = encode_png(image);
      datum.set_data(png.data(), png.size());
      datum.set_encoded(true);
    } else {
      const auto bgr = image.size(0) == 3 ? image.flip(0).contiguous() : image;
      datum.set_data(bgr.data_ptr<uint8_t>(), static_cast<size_t>(bgr.numel()));
    }
    const std::string bytes = datum.SerializeAsString();
    char key[16];
    std::snprintf(key, sizeof key, "%08zu", i);
    MDB_val k{std::strlen(key), key}, v{bytes.size(), const_cast<char*>(bytes.data())};
    check(mdb_put(txn, dbi, &k, &v, 0), what);
  }
  open_txn.release();  // the commit frees the transaction, whether it succeeds or not
  check(mdb_txn_commit(txn), what);
}

#else  // built without liblmdb and protobuf

namespace {
[[noreturn]] void unavailable() {
  throw core::UsageError(
      "caffe_lmdb: this engine was built without liblmdb and protobuf (Debian's liblmdb-dev, "
      "libprotobuf-dev, protobuf-compiler; scripts/install-deps.sh installs them)");
}
}  // namespace

struct CaffeLmdbSource::Database {};
CaffeLmdbSource::CaffeLmdbSource(std::string root, ColorMode mode)
    : root_(std::move(root)), mode_(mode) {
  unavailable();
}
CaffeLmdbSource::~CaffeLmdbSource() = default;
Batch CaffeLmdbSource::gather(const torch::Tensor&) const {
  unavailable();
}
std::string CaffeLmdbSource::describe() const {
  return "caffe_lmdb(" + root_ + ")";
}
bool caffe_lmdb_available() {
  return false;
}
void write_caffe_lmdb(const std::string&, const std::vector<torch::Tensor>&,
                      const std::vector<int64_t>&, bool) {
  unavailable();
}

#endif

}  // namespace engine::data
