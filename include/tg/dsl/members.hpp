// members.hpp: tensor's member functions, forwarding to the free functions.
#pragma once
#include <tg/dsl/composites.hpp>

namespace tg {

template <class E> template <class Axes, class Keep>
constexpr auto tensor<E>::sum(Axes axes, Keep keep) const { return tg::sum(*this, axes, keep); }
template <class E> template <class Axes, class Keep>
constexpr auto tensor<E>::max(Axes axes, Keep keep) const { return tg::max(*this, axes, keep); }
template <class E> template <class Shape>
constexpr auto tensor<E>::reshape(Shape s) const { return tg::reshape(*this, s); }
template <class E> template <class Shape>
constexpr auto tensor<E>::expand(Shape s) const { return tg::expand(*this, s); }
template <class E> template <int... Order>
constexpr auto tensor<E>::permute() const { return tg::permute<Order...>(*this); }
template <class E> template <class Before, class After>
constexpr auto tensor<E>::pad(Before b, After a) const { return tg::pad(*this, b, a); }
template <class E> template <class Begin, class End>
constexpr auto tensor<E>::shrink(Begin b, End e) const { return tg::shrink(*this, b, e); }
template <class E> template <class T>
constexpr auto tensor<E>::cast() const { return tg::cast<T>(*this); }

}  // namespace tg
