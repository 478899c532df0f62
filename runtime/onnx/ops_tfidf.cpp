// TfIdfVectorizer (opset 9) composed from tensor ops, so integer input runs as device kernels:
// for each n-gram length n and skip distance d, the n shifted slices x[i + j d] are compared
// with the pool's n-grams ([N, positions, K_n], a product of equalities), summed over the
// positions into counts, and the counts of every pool n-gram go to their output columns
// through a matmul with a one-hot [K, out] matrix. As in onnxruntime, n-grams of 2 or more
// count once per skip distance 1 ... max_skip_count + 1 and unigrams once. String input is
// mapped on the host to the pool_strings positions (-1 for a string not in the pool) and takes
// the same path. mode TF: counts; IDF: the n-gram's weight where its count is positive;
// TFIDF: count x weight (weights default to 1).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "onnx/host_values.h"

namespace kiln::onnx {

namespace {

void tfidf_vectorizer(NodeCtx& c) {
  const int64_t min_n = c.attr_i("min_gram_length", 0), max_n = c.attr_i("max_gram_length", 0);
  const int64_t skips = c.attr_i("max_skip_count", 0);
  const std::string mode = c.attr_s("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") c.fail("mode must be TF, IDF or TFIDF");
  if (min_n < 1 || max_n < min_n) c.fail("needs 1 <= min_gram_length <= max_gram_length");
  if (skips < 0) c.fail("max_skip_count must not be negative");
  const std::vector<int64_t> levels = c.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = c.attr_ints("ngram_indexes");
  const bool strings = c.has_attr("pool_strings");
  std::vector<int64_t> pool;
  Tensor x;
  if (strings) {
    const std::vector<std::string> words = c.attr_strings("pool_strings");
    std::map<std::string, int64_t> id;
    for (size_t i = 0; i < words.size(); ++i) {
      id.emplace(words[i], static_cast<int64_t>(i));
      pool.push_back(static_cast<int64_t>(id.at(words[i])));
    }
    const Value& s = string_tensor(c, 0);
    std::vector<int64_t> ids;
    for (const std::string& w : s.strings) ids.push_back(id.count(w) ? id.at(w) : -1);
    x = c.constant_i64(ids, Shape(s.shape.begin(), s.shape.end()));
  } else {
    if (!c.has_attr("pool_int64s")) c.fail("needs pool_int64s or pool_strings");
    pool = c.attr_ints("pool_int64s");
    x = c.in(0);
    if (!is_integral(x.dtype()) || x.dtype() == DType::kBool)
      c.fail("X must be integers (or strings)");
    x = cast(x, DType::kI64);
  }
  if (x.dim() != 1 && x.dim() != 2) c.fail("X must be [C] or [N, C]");
  const bool batched = x.dim() == 2;
  if (!batched) x = unsqueeze(x, 0);
  const int64_t n_rows = x.sizes()[0].value(), len = x.sizes()[1].value();

  // The pool's n-grams by level: level n holds pool[levels[n-1] .. next level) in n-tuples.
  std::vector<std::vector<int64_t>> grams(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    const int64_t begin = levels[l];
    const int64_t end = l + 1 < levels.size() ? levels[l + 1] : static_cast<int64_t>(pool.size());
    const auto n = static_cast<int64_t>(l + 1);
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n)
      c.fail("ngram_counts do not split the pool into whole n-grams");
    grams[l].assign(pool.begin() + begin, pool.begin() + end);
  }
  int64_t total = 0;
  for (size_t l = 0; l < grams.size(); ++l)
    total += static_cast<int64_t>(grams[l].size()) / static_cast<int64_t>(l + 1);
  if (static_cast<int64_t>(indexes.size()) != total)
    c.fail("ngram_indexes must have one entry per pool n-gram (" + std::to_string(total) + ")");
  if (total == 0) c.fail("the pool holds no n-grams");
  const int64_t width = *std::max_element(indexes.begin(), indexes.end()) + 1;
  if (*std::min_element(indexes.begin(), indexes.end()) < 0 || width > (int64_t{1} << 24))
    c.fail("ngram_indexes must lie in [0, 2^24)");
  std::vector<double> weights = c.attr_floats("weights");
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != total)
    c.fail("weights must have one entry per pool n-gram");

  // Counts per pool n-gram, [N, total] in pool order.
  std::vector<Tensor> parts;
  for (size_t l = 0; l < grams.size(); ++l) {
    const auto n = static_cast<int64_t>(l + 1);
    const int64_t k = static_cast<int64_t>(grams[l].size()) / n;
    if (k == 0) continue;
    Tensor count = zeros({n_rows, k}, DType::kI64, c.device());
    if (n >= min_n && n <= max_n) {
      // Column j of the level's n-grams, [1, 1, K].
      std::vector<Tensor> column;
      for (int64_t j = 0; j < n; ++j) {
        std::vector<int64_t> v;
        for (int64_t g = 0; g < k; ++g) v.push_back(grams[l][static_cast<size_t>(g * n + j)]);
        column.push_back(c.constant_i64(v, {1, 1, k}));
      }
      const int64_t distances = n == 1 ? 1 : skips + 1;
      for (int64_t d = 1; d <= distances; ++d) {
        const int64_t positions = len - (n - 1) * d;
        if (positions <= 0) break;
        Tensor match;
        for (int64_t j = 0; j < n; ++j) {
          Tensor s = unsqueeze(slice(x, 1, j * d, j * d + positions), 2);
          Tensor m = cast(eq(s, column[static_cast<size_t>(j)]), DType::kI64);
          match = j == 0 ? m : mul(match, m);
        }
        count = add(count, sum(match, {1}));
      }
    }
    parts.push_back(count);
  }
  Tensor counts = cast(parts.size() == 1 ? parts[0] : concat(parts, 1), DType::kF32);
  std::vector<double> onehot(static_cast<size_t>(total * width), 0.0),
      w(static_cast<size_t>(width), 1.0);
  for (int64_t g = 0; g < total; ++g) {
    onehot[static_cast<size_t>(g * width + indexes[static_cast<size_t>(g)])] = 1.0;
    if (!weights.empty())
      w[static_cast<size_t>(indexes[static_cast<size_t>(g)])] = weights[static_cast<size_t>(g)];
  }
  Tensor y = matmul(counts, c.constant(DType::kF32, {total, width}, onehot));
  const Tensor wt = c.constant(DType::kF32, {width}, w);
  if (mode == "IDF") y = mul(cast(gt(y, scalar(0, DType::kF32)), DType::kF32), wt);
  if (mode == "TFIDF") y = mul(y, wt);
  c.set(0, batched ? y : squeeze(y, 0));
}

}  // namespace

void register_tfidf_ops(std::map<std::string, OpHandler>& t) {
  t["TfIdfVectorizer"] = tfidf_vectorizer;
}

}  // namespace kiln::onnx
