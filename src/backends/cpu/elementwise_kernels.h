// Templates shared by the CPU elementwise kernels. An op is a small functor over compute
// values (float for fp16/bf16, the type itself otherwise); these templates instantiate it
// for every dtype of the op's TypeList and run it over the (broadcast) tensors.
#pragma once
#include <type_traits>

#include "backends/cpu/elementwise_broadcast.h"
#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/elementwise.h"

namespace kiln::cpu {

// A functor's result type R is stored as bool when R is bool (predicates), else as T.
template <class T, class R>
using stored_t = std::conditional_t<std::is_same_v<R, bool>, bool, T>;

// y[i] = f(x[i]) over the whole tensor.
template <class T, class F>
void map_unary(const Tensor& x, Tensor& y, const F& f) {
  using C = compute_t<T>;
  using Out = stored_t<T, decltype(f(C{}))>;
  const T* px = x.data_as<T>();
  Out* py = y.data_as<Out>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) py[i] = convert<Out>(f(static_cast<C>(px[i])));
}

// y = f(a, b) with broadcasting; A and B are the inputs' element types, Out the output's.
template <class Out, class A, class B, class F>
void map_binary(const Tensor& a, const Tensor& b, Tensor& y, const F& f) {
  using CA = compute_t<A>;
  using CB = compute_t<B>;
  const A* pa = a.data_as<A>();
  const B* pb = b.data_as<B>();
  Out* py = y.data_as<Out>();
  auto run = [&](int64_t o, const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& step, int64_t n) {
    const A* ra = pa + off[0];
    const B* rb = pb + off[1];
    Out* ry = py + o;
    // The common layouts get loops the compiler can vectorize.
    if (step[0] == 1 && step[1] == 1) {
      for (int64_t k = 0; k < n; ++k) ry[k] = convert<Out>(f(static_cast<CA>(ra[k]), static_cast<CB>(rb[k])));
    } else if (step[0] == 1 && step[1] == 0) {
      const CB vb = static_cast<CB>(*rb);
      for (int64_t k = 0; k < n; ++k) ry[k] = convert<Out>(f(static_cast<CA>(ra[k]), vb));
    } else if (step[0] == 0 && step[1] == 1) {
      const CA va = static_cast<CA>(*ra);
      for (int64_t k = 0; k < n; ++k) ry[k] = convert<Out>(f(va, static_cast<CB>(rb[k])));
    } else {
      for (int64_t k = 0; k < n; ++k) {
        ry[k] = convert<Out>(f(static_cast<CA>(ra[k * step[0]]), static_cast<CB>(rb[k * step[1]])));
      }
    }
  };
  for_each_broadcast_row<2>(y.shape(), {&a.shape(), &b.shape()}, run);
}

// Registers a one-input op over the dtypes of List. make(node) builds the functor (reading
// the node's attributes once per run, not per element).
template <class List, class Make>
void register_unary(KernelRegistry& r, const std::string& op, Make make) {
  r.add(op, [make, op](KernelContext& ctx) {
    const auto f = make(ctx.node());
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.alloc_output(0);
    const bool ok = dispatch<List>(x.dtype(), [&](auto tag) { map_unary<typename decltype(tag)::type>(x, y, f); });
    if (!ok) return unsupported("{} has no CPU kernel for {}", op, dtype_name(x.dtype()));
    return Status::OK();
  });
}

// The same for a functor without attributes.
template <class List, class F>
void register_unary(KernelRegistry& r, const std::string& op) {
  register_unary<List>(r, op, [](const ir::Node&) { return F{}; });
}

// Registers a two-input broadcasting op whose inputs share one dtype from List.
template <class List, class Make>
void register_binary(KernelRegistry& r, const std::string& op, Make make) {
  r.add(op, [make, op](KernelContext& ctx) {
    const auto f = make(ctx.node());
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& y = ctx.alloc_output(0);
    const bool ok = dispatch<List>(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Out = stored_t<T, decltype(f(compute_t<T>{}, compute_t<T>{}))>;
      map_binary<Out, T, T>(a, b, y, f);
    });
    if (!ok) return unsupported("{} has no CPU kernel for {}", op, dtype_name(a.dtype()));
    return Status::OK();
  });
}

template <class List, class F>
void register_binary(KernelRegistry& r, const std::string& op) {
  register_binary<List>(r, op, [](const ir::Node&) { return F{}; });
}

// Each part of the family registers through one of these (called by
// register_elementwise_kernels).
void register_unary_kernels(KernelRegistry& r);
void register_activation_kernels(KernelRegistry& r);
void register_binary_kernels(KernelRegistry& r);
void register_variadic_kernels(KernelRegistry& r);

}  // namespace kiln::cpu
