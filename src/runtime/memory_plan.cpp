#include "runtime/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace kiln::runtime {
namespace {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// A set of tensors that share one block: a tensor and the chain of tensors aliasing it.
struct Group {
  size_t bytes = 0;
  int first = 0, last = 0;
  size_t offset = 0;
};

bool overlap(const Group& a, const Group& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

MemoryPlan plan_memory(const std::vector<PlanTensor>& tensors, size_t alignment) {
  KILN_ASSERT(alignment > 0 && (alignment & (alignment - 1)) == 0, "alignment {} is not a power of two", alignment);
  const size_t n = tensors.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  plan.aliased.assign(n, false);

  // Merge in-place aliases into groups first: a group lives from its first writer to its last reader.
  std::vector<int> group_of(n, -1);
  std::vector<Group> groups;
  std::vector<int> group_last_member;  // an alias must continue the chain at its latest member
  for (size_t i = 0; i < n; ++i) {
    const PlanTensor& t = tensors[i];
    KILN_ASSERT(t.first <= t.last, "tensor '{}' has lifetime [{}, {}]", t.name, t.first, t.last);
    plan.total_bytes += t.bytes;
    const int a = t.may_alias;
    if (a >= 0 && static_cast<size_t>(a) < i) {
      const int g = group_of[a];
      const PlanTensor& src = tensors[a];
      if (group_last_member[g] == a && src.last <= t.first && t.bytes <= groups[g].bytes) {
        group_of[i] = g;
        groups[g].last = std::max(groups[g].last, t.last);
        group_last_member[g] = static_cast<int>(i);
        plan.aliased[i] = true;
        continue;
      }
    }
    group_of[i] = static_cast<int>(groups.size());
    groups.push_back({align_up(std::max<size_t>(t.bytes, 1), alignment), t.first, t.last, 0});
    group_last_member.push_back(static_cast<int>(i));
  }

  // Largest first; ties by earlier first use, then index, so the plan is deterministic.
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (groups[a].bytes != groups[b].bytes) return groups[a].bytes > groups[b].bytes;
    return groups[a].first < groups[b].first;
  });
  std::vector<size_t> placed;
  for (size_t gi : order) {
    Group& g = groups[gi];
    std::vector<const Group*> live;
    for (size_t p : placed) {
      if (overlap(groups[p], g)) live.push_back(&groups[p]);
    }
    std::sort(live.begin(), live.end(), [](const Group* a, const Group* b) { return a->offset < b->offset; });
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const Group* l : live) {
      if (l->offset >= cursor) {
        const size_t gap = l->offset - cursor;
        if (gap >= g.bytes && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, l->offset + l->bytes);
    }
    g.offset = best != SIZE_MAX ? best : cursor;
    plan.arena_bytes = std::max(plan.arena_bytes, g.offset + g.bytes);
    placed.push_back(gi);
  }
  for (size_t i = 0; i < n; ++i) plan.offsets[i] = groups[group_of[i]].offset;
  return plan;
}

std::string MemoryPlan::to_string(const std::vector<PlanTensor>& tensors) const {
  auto mib = [](size_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); };
  std::string out = fmt::format("arena {:.3f} MiB for {} tensors (sum of sizes {:.3f} MiB, {:.2f}x reuse)\n",
                                mib(arena_bytes), tensors.size(), mib(total_bytes),
                                arena_bytes ? static_cast<double>(total_bytes) / static_cast<double>(arena_bytes) : 1.0);
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
  for (size_t i : order) {
    const PlanTensor& t = tensors[i];
    out += fmt::format("  {:>12} {:>12} [{:>4},{:>4}] {}{}\n", offsets[i], t.bytes, t.first, t.last, t.name,
                       aliased[i] ? fmt::format(" (in place of '{}')", tensors[t.may_alias].name) : "");
  }
  return out;
}

}  // namespace kiln::runtime
