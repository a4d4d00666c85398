// Einsum: equation parsing and shape inference.
#include <algorithm>
#include <map>

#include "core/error.h"
#include "ops/matmul.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

// Labels sort like their letters in ASCII (uppercase first), as numpy orders implicit outputs.
int letter_label(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : 26 + (c - 'a'); }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

struct Term {
  std::vector<int> letters_before;  // labels left of "..."
  std::vector<int> letters_after;   // labels right of "..." (all labels when there is none)
  bool has_ellipsis = false;
  int num_letters() const { return static_cast<int>(letters_before.size() + letters_after.size()); }
};

Status parse_term(const std::string& s, Term* t) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (s.compare(i, 3, "...") != 0 || t->has_ellipsis) {
        return invalid_argument("bad ellipsis in Einsum term '{}'", s);
      }
      t->has_ellipsis = true;
      t->letters_before.swap(t->letters_after);
      i += 2;
    } else if (is_letter(s[i])) {
      t->letters_after.push_back(letter_label(s[i]));
    } else {
      return invalid_argument("unexpected character '{}' in Einsum term '{}'", s[i], s);
    }
  }
  return Status::OK();
}

// Labels of a term with its ellipsis expanded to `ell` dims, right-aligned in the `total`
// broadcast ellipsis dims.
std::vector<int> expand_term(const Term& t, int ell, int total) {
  std::vector<int> out = t.letters_before;
  for (int j = 0; j < ell; ++j) out.push_back(EinsumSpec::kEllipsisLabel + total - ell + j);
  out.insert(out.end(), t.letters_after.begin(), t.letters_after.end());
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

Status infer_einsum(InferContext& ctx) {
  const DType t = ctx.input_type(0).dtype;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    KILN_ENSURE(ctx.has_input(i) && ctx.input_type(i).dtype == t, "every Einsum operand must be {}",
                dtype_name(t));
  }
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0,
                                    {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                     DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8,
                                     DType::kUInt16, DType::kUInt32, DType::kUInt64}));
  std::vector<int> ranks;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input_type(i).has_rank()) {
      set_output(ctx, 0, t, std::nullopt);
      return Status::OK();
    }
    ranks.push_back(ctx.input_type(i).rank());
  }
  EinsumSpec spec;
  KILN_RETURN_IF_ERROR(parse_einsum(ctx.node.attr_s("equation", ""), ranks, &spec));
  // Each label's size; size-1 dims broadcast against the others.
  std::map<int, ir::Dim> dims;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const auto& shape = *ctx.input_type(static_cast<int>(i)).shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int label = spec.inputs[i][d];
      const ir::Dim& cur = shape[d];
      auto it = dims.find(label);
      if (it == dims.end() || (it->second.known() && it->second.value == 1)) {
        dims[label] = cur;
      } else if (cur.known() && cur.value != 1) {
        if (it->second.known() && it->second.value != cur.value) {
          return invalid_argument("Einsum operand {} has size {} for a label of size {}", i, cur.value,
                                  it->second.value);
        }
        it->second = cur;
      }
    }
  }
  std::vector<ir::Dim> out;
  for (int label : spec.output) out.push_back(dims[label]);
  set_output(ctx, 0, t, std::move(out));
  return Status::OK();
}

// A direct evaluation multiplies once per combination of all labels' values.
Cost einsum_cost(const CostContext& ctx) {
  Cost c;
  std::vector<int> ranks;
  for (const auto* t : ctx.input_types) {
    ranks.push_back(t->rank());
    c.bytes += static_cast<double>(Tensor::numel_of(t->concrete()) * dtype_size(t->dtype));
  }
  const auto* y = ctx.output_types[0];
  c.bytes += static_cast<double>(Tensor::numel_of(y->concrete()) * dtype_size(y->dtype));
  EinsumSpec spec;
  if (!parse_einsum(ctx.node.attr_s("equation", ""), ranks, &spec).ok()) return c;
  std::map<int, int64_t> sizes;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const auto shape = ctx.input_types[i]->concrete();
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t& s = sizes.try_emplace(spec.inputs[i][d], shape[d]).first->second;
      if (s == 1) s = shape[d];
    }
  }
  c.macs = 1;
  for (const auto& [label, n] : sizes) c.macs *= static_cast<double>(n);
  return c;
}

}  // namespace

Status parse_einsum(const std::string& equation, const std::vector<int>& ranks, EinsumSpec* out) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const bool explicit_out = arrow != std::string::npos;
  const auto lhs = split(eq.substr(0, arrow), ',');
  if (lhs.size() != ranks.size()) {
    return invalid_argument("Einsum equation '{}' has {} operands but the node has {} inputs", equation,
                            lhs.size(), ranks.size());
  }
  std::vector<Term> terms(lhs.size());
  std::vector<int> ell(lhs.size(), 0);
  int total_ell = 0;
  for (size_t i = 0; i < lhs.size(); ++i) {
    KILN_RETURN_IF_ERROR(parse_term(lhs[i], &terms[i]));
    ell[i] = ranks[i] - terms[i].num_letters();
    if (ell[i] < 0 || (!terms[i].has_ellipsis && ell[i] != 0)) {
      return invalid_argument("Einsum term '{}' does not match operand {} of rank {}", lhs[i], i, ranks[i]);
    }
    total_ell = std::max(total_ell, ell[i]);
  }
  EinsumSpec spec;
  std::map<int, int> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    spec.inputs.push_back(expand_term(terms[i], ell[i], total_ell));
    for (int l : spec.inputs.back()) ++count[l];
  }
  if (explicit_out) {
    Term o;
    KILN_RETURN_IF_ERROR(parse_term(eq.substr(arrow + 2), &o));
    // Without "..." in the output, the ellipsis dims are summed over.
    spec.output = expand_term(o, o.has_ellipsis ? total_ell : 0, total_ell);
    std::map<int, int> seen;
    for (int l : spec.output) {
      if (!count.count(l)) return invalid_argument("Einsum output label in '{}' appears in no operand", equation);
      if (seen[l]++) return invalid_argument("Einsum output repeats a label in '{}'", equation);
    }
  } else {
    // Implicit output: the ellipsis dims, then every label used exactly once, in ASCII order.
    for (int j = 0; j < total_ell; ++j) spec.output.push_back(EinsumSpec::kEllipsisLabel + j);
    for (const auto& [l, n] : count) {
      if (n == 1 && l < EinsumSpec::kEllipsisLabel) spec.output.push_back(l);
    }
  }
  *out = std::move(spec);
  return Status::OK();
}

void register_einsum_ops(OpRegistry& r) {
  r.add({.op_type = "Einsum", .attributes = {"equation"}, .infer = infer_einsum, .cost = einsum_cost});
}

}  // namespace kiln::ops
