// NumPy .npy I/O: round trips, hand-written fixtures (versions, byte orders, header dict
// spellings), every malformed-input error, fuzzed inputs, and nn::load_weights.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "kiln/io.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::byte>;

/// A .npy file: magic, version major.0, header length (2 bytes for 1.x, else 4), header, data.
Bytes npy(int major, const std::string& header, const Bytes& data = {}) {
  Bytes b;
  for (unsigned char c : std::string("\x93NUMPY")) b.push_back(std::byte{c});
  b.push_back(std::byte(major));
  b.push_back(std::byte{0});
  const size_t len_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i) b.push_back(std::byte((header.size() >> (8 * i)) & 255));
  for (char c : header) b.push_back(std::byte(c));
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

std::string dict(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }\n";
}

/// The bytes of `values` as stored with the given byte order.
template <typename T>
Bytes raw(std::vector<T> values, bool big_endian = false) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  if (big_endian)
    for (size_t i = 0; i < b.size(); i += sizeof(T)) std::reverse(&b[i], &b[i] + sizeof(T));
  return b;
}

Tensor parse_ok(const Bytes& b) {
  Expected<Tensor> t = parse_npy(b);
  if (!t.ok()) ADD_FAILURE() << t.status().to_string();
  return t.ok() ? *t : Tensor();
}

void expect_error(const Bytes& b, const std::string& needle) {
  Expected<Tensor> t = parse_npy(b);
  ASSERT_FALSE(t.ok()) << "parsed, but expected an error containing: " << needle;
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find(needle), std::string::npos) << t.status().message();
}

struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("kiln_npy_test_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

Tensor make(DType dtype, const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 7) * (i % 2 ? -1.5 : 1.0) + (i % 3 == 0);
  if (dtype == DType::kBool)
    for (double& x : v) x = x > 0;
  if (dtype == DType::kI32 || dtype == DType::kI64)
    for (double& x : v) x = std::floor(x * 1000);
  Tensor t = Tensor::full(shape, 0, dtype);
  Bytes b(v.size() * dtype_size(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    void* p = &b[i * dtype_size(dtype)];
    auto f = static_cast<float>(v[i]);
    uint16_t h = float_to_half(f);
    auto i32 = static_cast<int32_t>(v[i]);
    int64_t i64 = static_cast<int64_t>(v[i]) * (int64_t{1} << 20);
    uint8_t u8 = v[i] != 0;
    const void* src = dtype == DType::kF32   ? static_cast<const void*>(&f)
                      : dtype == DType::kF16 ? static_cast<const void*>(&h)
                      : dtype == DType::kI32 ? static_cast<const void*>(&i32)
                      : dtype == DType::kI64 ? static_cast<const void*>(&i64)
                                             : static_cast<const void*>(&u8);
    std::memcpy(p, src, dtype_size(dtype));
  }
  t.copy_from(b.data(), b.size());
  return t;
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool}) {
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{1}, Shape{3, 5}, Shape{2, 0, 4}}) {
      SCOPED_TRACE((TensorMeta{dtype, shape}.str()));
      Tensor t = make(dtype, shape);
      Bytes b = serialize_npy(t);
      const size_t header_len = static_cast<size_t>(b[8]) | static_cast<size_t>(b[9]) << 8;
      EXPECT_EQ((10 + header_len) % 64, 0u);
      EXPECT_EQ(static_cast<char>(b[9 + header_len]), '\n');
      Tensor back = parse_ok(b);
      ASSERT_TRUE(back.defined());
      EXPECT_EQ(back.meta(), t.meta());
      EXPECT_EQ(back.to_doubles(), t.to_doubles());
    }
  }
}

TEST(Npy, WritesWhatNumpyWrites) {
  // np.save(f, np.array([1, 2, 3], dtype='<i4')): 128 bytes of header, then the data.
  Bytes expected = npy(
      1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" + std::string(60, ' ') + "\n",
      raw<int32_t>({1, 2, 3}));
  EXPECT_EQ(serialize_npy(Tensor::from_vector<int32_t>({1, 2, 3}, {3})), expected);
}

TEST(Npy, SaveAndLoadFiles) {
  TempDir dir("files");
  const std::string path = (dir.path / "x.npy").string();
  Tensor t = make(DType::kF16, {4, 3});
  ASSERT_TRUE(save_npy(path, t).ok());
  Expected<Tensor> back = load_npy(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->meta(), t.meta());
  EXPECT_EQ(back->to_doubles(), t.to_doubles());

  Expected<Tensor> missing = load_npy((dir.path / "nope.npy").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.npy: no such file"), std::string::npos);
  Expected<Tensor> is_dir = load_npy(dir.path.string());
  ASSERT_FALSE(is_dir.ok());
  EXPECT_NE(is_dir.status().message().find("directory"), std::string::npos);
  // Parse errors from a file name the file.
  std::ofstream(dir.path / "bad.npy") << "NUMPY";
  Expected<Tensor> bad = load_npy((dir.path / "bad.npy").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind((dir.path / "bad.npy").string() + ": not a .npy", 0), 0u)
      << bad.status().message();
  EXPECT_FALSE(save_npy((dir.path / "no_dir" / "x.npy").string(), t).ok());
  EXPECT_FALSE(save_npy(path, Tensor()).ok());
}

TEST(Npy, VersionsAndByteOrders) {
  Bytes f4 = raw<float>({1.5f, -2.f, 3.25f});
  for (int major : {1, 2, 3}) {
    Tensor t = parse_ok(npy(major, dict("<f4", "(3,)"), f4));
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.5f, -2.f, 3.25f}));
  }
  EXPECT_EQ(parse_ok(npy(1, dict(">f4", "(3,)"), raw<float>({1.5f, -2.f, 3.25f}, true)))
                .to_vector<float>(),
            (std::vector<float>{1.5f, -2.f, 3.25f}));
  EXPECT_EQ(parse_ok(npy(1, dict(">i8", "(2,)"), raw<int64_t>({-5, int64_t{1} << 40}, true)))
                .to_vector<int64_t>(),
            (std::vector<int64_t>{-5, int64_t{1} << 40}));
  EXPECT_EQ(
      parse_ok(npy(2, dict(">i4", "(2, 1)"), raw<int32_t>({7, -8}, true))).to_vector<int32_t>(),
      (std::vector<int32_t>{7, -8}));
  Tensor h = parse_ok(
      npy(3, dict(">f2", "(2,)"), raw<uint16_t>({float_to_half(0.5f), float_to_half(-3.f)}, true)));
  EXPECT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{0.5f, -3.f}));
  EXPECT_EQ(parse_ok(npy(1, dict("=f4", "()"), raw<float>({4.f}))).item<float>(), 4.f);
  EXPECT_EQ(parse_ok(npy(1, dict("f4", "()"), raw<float>({4.f}))).item<float>(), 4.f);
  // complex64: each of the two floats swapped on its own.
  for (const char* descr : {"<c8", ">c8"}) {
    const bool big = descr[0] == '>';
    Tensor z = parse_ok(npy(1, dict(descr, "(2,)"), raw<float>({1.5f, -2.f, 3.25f, 0.f}, big)));
    EXPECT_EQ(z.dtype(), DType::kC64);
    EXPECT_EQ(z.to_vector<std::complex<float>>(),
              (std::vector<std::complex<float>>{{1.5f, -2.f}, {3.25f, 0.f}}));
    EXPECT_EQ(parse_ok(serialize_npy(z)).to_vector<std::complex<float>>(),
              z.to_vector<std::complex<float>>());
  }
  // Bool: any byte order mark; non-zero bytes read as true.
  for (const char* descr : {"|b1", "<b1", ">b1", "=b1"})
    EXPECT_EQ(parse_ok(npy(1, dict(descr, "(3,)"), raw<uint8_t>({0, 1, 2}))).to_doubles(),
              (std::vector<double>{0, 1, 1}));
}

TEST(Npy, HeaderDictSpellings) {
  Bytes data = raw<int32_t>({1, 2, 3, 4, 5, 6});
  for (const std::string& header : {
           std::string("{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4'}"),
           std::string("{\"descr\":\"<i4\",\"fortran_order\":False,\"shape\":(2,3)}"),
           std::string("{ 'fortran_order' : False , 'descr' : '<i4' , 'shape' : ( 2 , 3 , ) , }"),
           std::string("{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L), }   \n"),
           std::string("{'descr':'<i4','fortran_order':False,'shape':(2,3),}\n\n  "),
       }) {
    SCOPED_TRACE(header);
    Tensor t = parse_ok(npy(1, header, data));
    EXPECT_EQ(t.meta().str(), "i32[2, 3]");
  }
  EXPECT_EQ(parse_ok(npy(1, dict("<i4", "( )"), raw<int32_t>({9}))).item<int>(), 9);
}

TEST(Npy, MalformedFilesSayWhatIsWrong) {
  const Bytes f4 = raw<float>({1, 2, 3});
  const Bytes good = npy(1, dict("<f4", "(3,)"), f4);
  expect_error({}, "not a .npy file: it is empty");
  expect_error(Bytes(good.begin() + 1, good.end()), "bad magic (expected \\x93NUMPY, found '\\x4e");
  expect_error(Bytes(good.begin(), good.begin() + 4), "ends inside the magic string");
  expect_error(Bytes(good.begin(), good.begin() + 7), "ends before the format version");
  expect_error(npy(4, dict("<f4", "(3,)"), f4), "unknown .npy format version 4.0");
  expect_error(npy(0, dict("<f4", "(3,)"), f4), "unknown .npy format version 0.0");
  Bytes v11 = good;
  v11[7] = std::byte{1};
  expect_error(v11, "unknown .npy format version 1.1");
  expect_error(Bytes(good.begin(), good.begin() + 9), "ends inside the header length field");
  expect_error(Bytes(good.begin(), good.begin() + 11),
               "truncated header: header length 58 extends beyond the end of the file (1 byte");
  Bytes v2 = npy(2, dict("<f4", "(3,)"), f4);
  v2[11] = std::byte{0x7f};
  expect_error(v2, "header length 2130706490 extends beyond the end of the file");

  auto header_error = [&](const std::string& header, const std::string& needle) {
    SCOPED_TRACE(header);
    expect_error(npy(1, header, f4), needle);
  };
  header_error("", "expected '{' at the start");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)",
               "unterminated dict (no closing '}')");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,", "unterminated shape");
  header_error("{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}", "expected ':' after key");
  header_error("{'descr': '<f4\n', 'fortran_order': False, 'shape': (3,)}", "unterminated string");
  header_error("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}",
               "expected ',' or '}' after the value of 'descr'");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
               "unexpected text after the closing '}'");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,),,}",
               "expected a quoted key");
  header_error("{descr: '<f4'}", "expected a quoted key");
  header_error("{'descr': <f4, 'fortran_order': False, 'shape': (3,)}",
               "expected a quoted dtype string");
  header_error("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}",
               "'fortran_order' must be True or False");
  header_error("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,)}",
               "'fortran_order' must be True or False");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", "must be a tuple");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}",
               "shape (3) is an integer, not a tuple; write (3,)");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}",
               "expected ',' or ')' in the shape tuple");
  header_error("{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'");
  header_error("{'fortran_order': False, 'shape': (3,)}", "missing key 'descr'");
  header_error("{'descr': '<f4', 'shape': (3,)}", "missing key 'fortran_order'");
  header_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
               "duplicate key 'descr'");
  header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
               "unexpected key 'x'");
  header_error(dict("<f4", "(-3,)"), "negative dimension -3 in shape");
  header_error(dict("<f4", "(1.5,)"), "shape dimension '1.5' is not an integer");
  header_error(dict("<f4", "(3e0,)"), "shape dimension '3e0' is not an integer");
  header_error(dict("<f4", "(x,)"), "shape dimension is not an integer");
  header_error(dict("<f4", "(99999999999999999999,)"), "does not fit in int64");
  header_error(dict("<f4", "(20000000000000000000,)"), "does not fit in int64");  // wraps uint64
  header_error(dict("<f4", "(9223372036854775808,)"), "does not fit in int64");
  header_error(dict("<f4", "(9223372036854775807, 0)"), "data is longer than the shape");
  std::string rank65 = "(";
  for (int i = 0; i < 65; ++i) rank65 += "1,";
  header_error(dict("<f4", rank65 + ")"), "more than 64 dimensions");
  header_error(dict("<f4", "(4294967296, 4294967296)"),
               "element count overflow: shape (4294967296, 4294967296) of '<f4' has more than");
  header_error(dict("<f4", "(3037000499, 3037000499)"),
               "element count overflow: shape (3037000499, 3037000499) of '<f4' needs more");
  header_error(dict("<f4", "(1000000000000,)"),
               "data is truncated: shape (1000000000000,) of '<f4' needs 4000000000000 bytes, "
               "the file has 12 bytes");
  header_error(dict("<f4", "(4,)"), "data is truncated: shape (4,) of '<f4' needs 16 bytes");
  header_error(dict("<f4", "(2,)"),
               "data is longer than the shape: shape (2,) of '<f4' needs 8 bytes, the file has 12");
  header_error("{'descr': '<f4', 'fortran_order': True, 'shape': (3,)}",
               "fortran_order True is not supported");
  header_error(dict("|u1", "(12,)"), "unsupported dtype '|u1' (uint8)");
  for (const char* descr : {"<f8", "<i2", "<c16", "|O", "|V12", "float32", "<u4", ""})
    header_error(dict(descr, "(3,)"), std::string("unsupported dtype '") + descr + "'");
  header_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}",
               "structured (record) dtypes are not supported");
  header_error(dict("|f4", "(3,)"), "byte order '|' (not applicable) on the 4-byte dtype '|f4'");
  header_error(dict("|c8", "(1,)"), "byte order '|' (not applicable) on the 8-byte dtype '|c8'");
  header_error("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,)}", "escape sequences");
}

/// Checks that a tensor from a mutated file is self-consistent.
void check_sane(const Tensor& t) {
  ASSERT_TRUE(t.defined());
  ASSERT_LE(t.dim(), 64);
  for (Dim d : t.shape()) ASSERT_GE(d, 0);
  ASSERT_LE(t.numel() * static_cast<int64_t>(dtype_size(t.dtype())), 4096);
  EXPECT_EQ(t.to_doubles().size(), static_cast<size_t>(t.numel()));
}

TEST(Npy, TruncatedAndMutatedFilesNeverCrash) {
  const Bytes good = serialize_npy(make(DType::kF32, {3, 5}));
  for (size_t n = 0; n < good.size(); ++n) {
    Expected<Tensor> t = parse_npy(Bytes(good.begin(), good.begin() + static_cast<ptrdiff_t>(n)));
    EXPECT_FALSE(t.ok()) << "truncated to " << n << " bytes";
  }
  std::mt19937 rng(1234);
  const std::string interesting = "{}()[]',:\" -0123456789LTrueFalse<>=|fib\n";
  int parsed = 0;
  for (int variant = 0; variant < 4000; ++variant) {
    Bytes b = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      // Mostly the header (where the parser is), sometimes anywhere.
      const size_t limit = rng() % 4 ? 128 : b.size();
      const size_t pos = rng() % limit;
      switch (rng() % 4) {
        case 0:
          b[pos] ^= std::byte(1u << (rng() % 8));
          break;
        case 1:
          b[pos] = std::byte(rng() & 255);
          break;
        case 2:
          b[pos] = std::byte(interesting[rng() % interesting.size()]);
          break;
        default:
          b.resize(pos);
          break;
      }
      if (b.empty()) break;
    }
    Expected<Tensor> t = parse_npy(b);
    if (t.ok()) {
      ++parsed;
      check_sane(*t);
    } else {
      EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
      EXPECT_FALSE(t.status().message().empty());
    }
  }
  EXPECT_GT(parsed, 0);  // some mutations (data bytes, padding) keep the file valid
}

nn::TransformerEncoder encoder(uint64_t seed, int64_t ffn = 16) {
  nn::WeightGenerator gen(seed);
  return nn::TransformerEncoder(2, 8, 2, ffn, gen, Device::cpu());
}

TEST(NnWeights, NamedParametersUsePytorchStyleNames) {
  nn::TransformerEncoder enc = encoder(1);
  nn::NamedParameters params = nn::named_parameters(enc);
  ASSERT_EQ(params.size(), 32u);
  EXPECT_EQ(params[0].first, "layers.0.attn.q.weight");
  EXPECT_EQ(params[0].second, &enc.layers[0].attn.q.weight);
  EXPECT_EQ(params[7].first, "layers.0.attn.out.bias");
  EXPECT_EQ(params[13].first, "layers.0.norm1.bias");
  EXPECT_EQ(params[31].first, "layers.1.norm2.bias");
  EXPECT_EQ(nn::named_parameters(enc.layers[1].ff2, "enc.layers.1.ff2")[0].first,
            "enc.layers.1.ff2.weight");
  nn::WeightGenerator gen(3);
  nn::Embedding emb(10, 4, gen, Device::cpu());
  EXPECT_EQ(nn::named_parameters(emb, "tok")[0].first, "tok.weight");
}

TEST(NnWeights, LoadWeightsRoundTripAndErrors) {
  TempDir dir("weights");
  nn::TransformerEncoder a = encoder(1);
  for (auto& [name, t] : nn::named_parameters(a))
    ASSERT_TRUE(save_npy((dir.path / (name + ".npy")).string(), *t).ok()) << name;

  nn::TransformerEncoder b = encoder(2);
  Tensor q_before = b.layers[0].attn.q.weight;
  EXPECT_NE(q_before.to_vector<float>(), a.layers[0].attn.q.weight.to_vector<float>());
  ASSERT_TRUE(nn::load_weights(dir.path.string(), nn::named_parameters(b), Device::cpu()).ok());
  auto pa = nn::named_parameters(a), pb = nn::named_parameters(b);
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_EQ(pa[i].second->to_vector<float>(), pb[i].second->to_vector<float>()) << pa[i].first;
  // Loaded in place: other handles to the same tensor see the new values.
  EXPECT_EQ(q_before.to_vector<float>(), a.layers[0].attn.q.weight.to_vector<float>());

  // A shape mismatch names the file and both metas, and changes nothing.
  nn::TransformerEncoder c = encoder(3, /*ffn=*/32);
  const std::vector<float> c_q = c.layers[0].attn.q.weight.to_vector<float>();
  Status s = nn::load_weights(dir.path.string(), nn::named_parameters(c), Device::cpu());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find((dir.path / "layers.0.ff1.weight.npy").string() +
                             " holds f32[16, 8] but parameter 'layers.0.ff1.weight' is f32[32, 8]"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(c.layers[0].attn.q.weight.to_vector<float>(), c_q);

  // A missing file names its path.
  TempDir empty("empty");
  s = nn::load_weights(empty.path.string(), nn::named_parameters(c), Device::cpu());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.message().find((empty.path / "layers.0.attn.q.weight.npy").string() + ": no such file"),
      std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace kiln
