// reference_forward.cpp: tinygrad/llm/model.py's Transformer.forward written as directly as possible.
#include "tests/llm/model/reference_forward.hpp"

#include <cmath>
#include <string>

#include "llm/gguf/dequant_reference.hpp"

namespace tg::test {
namespace {

using vec = std::vector<double>;

struct matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> v;
};

matrix load(const gguf::file& f, const std::string& name) {
  const auto& t = f.get_tensor(name);
  matrix m{std::int64_t(t.row_count()), std::int64_t(t.ne[0]), {}};
  m.v.resize(std::size_t(m.rows * m.cols));
  const std::byte* data = f.tensor_data(t);
  for (std::int64_t r = 0; r < m.rows; ++r)
    gguf::dequantize_row(t.type, data + r * std::int64_t(t.row_size_bytes()), m.v.data() + r * m.cols, std::size_t(m.cols));
  return m;
}

vec matvec(const matrix& m, const vec& x) {
  vec y(std::size_t(m.rows));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    double s = 0;
    for (std::int64_t k = 0; k < m.cols; ++k) s += double(m.v[std::size_t(r * m.cols + k)]) * x[std::size_t(k)];
    y[std::size_t(r)] = s;
  }
  return y;
}

// RMSNorm of x[at .. at + n) in place, times w.
void rms_norm(vec& x, std::size_t at, std::size_t n, const matrix& w, double eps) {
  double ss = 0;
  for (std::size_t i = 0; i < n; ++i) ss += x[at + i] * x[at + i];
  double scale = 1.0 / std::sqrt(ss / double(n) + eps);
  for (std::size_t i = 0; i < n; ++i) x[at + i] = x[at + i] * scale * w.v[i];
}

void add_bias(vec& x, const gguf::file& f, const std::string& name) {
  if (f.find_tensor(name) == nullptr) return;
  matrix b = load(f, name);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += b.v[i];
}

void rope(vec& x, std::int64_t heads, const model::model_config& c, std::int64_t pos, const std::vector<float>& factors) {
  const std::int64_t hd = c.head_dim, half = c.rope_dim / 2;
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < half; ++i) {
      double freq = std::pow(c.rope_theta, -2.0 * double(i) / double(c.rope_dim));
      if (!factors.empty()) freq /= factors[std::size_t(i)];
      double a = double(pos) * freq, cs = std::cos(a), sn = std::sin(a);
      bool neox = c.rope == model::rope_style::neox;
      std::size_t p0 = std::size_t(h * hd + (neox ? i : 2 * i)), p1 = std::size_t(h * hd + (neox ? i + half : 2 * i + 1));
      double x0 = x[p0], x1 = x[p1];
      x[p0] = x0 * cs - x1 * sn;
      x[p1] = x1 * cs + x0 * sn;
    }
}

}  // namespace

std::vector<double> reference_logits(const gguf::file& f, const model::model_config& c, std::span<const std::int32_t> tokens) {
  const std::int64_t hd = c.head_dim, group = c.n_head / c.n_kv_head;
  matrix embd = load(f, "token_embd.weight"), out_norm = load(f, "output_norm.weight");
  matrix head = c.tied_output ? embd : load(f, "output.weight");
  std::vector<float> factors;
  if (f.find_tensor("rope_freqs.weight")) factors = load(f, "rope_freqs.weight").v;
  std::vector<vec> x(tokens.size());
  for (std::size_t t = 0; t < tokens.size(); ++t)
    x[t].assign(embd.v.begin() + tokens[t] * c.dim, embd.v.begin() + (tokens[t] + 1) * c.dim);
  for (std::int64_t l = 0; l < c.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    matrix an = load(f, p + "attn_norm.weight"), wq = load(f, p + "attn_q.weight"), wk = load(f, p + "attn_k.weight");
    matrix wv = load(f, p + "attn_v.weight"), wo = load(f, p + "attn_output.weight"), fnorm = load(f, p + "ffn_norm.weight");
    matrix wg = load(f, p + "ffn_gate.weight"), wu = load(f, p + "ffn_up.weight"), wd = load(f, p + "ffn_down.weight");
    std::vector<vec> keys, values;
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      vec h = x[t];
      rms_norm(h, 0, h.size(), an, c.eps);
      vec q = matvec(wq, h), k = matvec(wk, h), v = matvec(wv, h);
      add_bias(q, f, p + "attn_q.bias");
      add_bias(k, f, p + "attn_k.bias");
      add_bias(v, f, p + "attn_v.bias");
      if (c.qk_norm) {
        matrix qn = load(f, p + "attn_q_norm.weight"), kn = load(f, p + "attn_k_norm.weight");
        for (std::int64_t i = 0; i < c.n_head; ++i) rms_norm(q, std::size_t(i * hd), std::size_t(hd), qn, c.eps);
        for (std::int64_t i = 0; i < c.n_kv_head; ++i) rms_norm(k, std::size_t(i * hd), std::size_t(hd), kn, c.eps);
      }
      rope(q, c.n_head, c, std::int64_t(t), factors);
      rope(k, c.n_kv_head, c, std::int64_t(t), factors);
      keys.push_back(k);
      values.push_back(v);
      vec att(std::size_t(c.n_head * hd), 0.0);
      for (std::int64_t i = 0; i < c.n_head; ++i) {
        const std::size_t kvo = std::size_t((i / group) * hd), qo = std::size_t(i * hd);
        vec s(t + 1);
        double mx = -1e300, sum = 0;
        for (std::size_t j = 0; j <= t; ++j) {
          double d = 0;
          for (std::int64_t e = 0; e < hd; ++e) d += q[qo + std::size_t(e)] * keys[j][kvo + std::size_t(e)];
          s[j] = d / std::sqrt(double(hd));
          mx = std::fmax(mx, s[j]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (std::size_t j = 0; j <= t; ++j)
          for (std::int64_t e = 0; e < hd; ++e) att[qo + std::size_t(e)] += s[j] / sum * values[j][kvo + std::size_t(e)];
      }
      vec o = matvec(wo, att);
      for (std::size_t i = 0; i < o.size(); ++i) x[t][i] += o[i];
      vec n = x[t];
      rms_norm(n, 0, n.size(), fnorm, c.eps);
      vec g = matvec(wg, n), u = matvec(wu, n);
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
      vec dn = matvec(wd, g);
      for (std::size_t i = 0; i < dn.size(); ++i) x[t][i] += dn[i];
    }
  }
  std::vector<double> logits;
  for (auto& row : x) {
    rms_norm(row, 0, row.size(), out_norm, c.eps);
    vec l = matvec(head, row);
    logits.insert(logits.end(), l.begin(), l.end());
  }
  return logits;
}

}  // namespace tg::test
