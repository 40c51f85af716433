// cupric/small_vector.hpp — a vector that keeps its first N elements inline (no allocation), for
// shapes, strides and iteration plans: copying an Array or building a plan for a small op allocates nothing.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace cupric {

/// std::vector's interface (the parts cupric uses), with inline storage for N elements; it
/// converts to and from std::vector<T> implicitly.
template <class T, std::size_t N>
class SmallVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() noexcept = default;
  explicit SmallVector(size_type n) { resize(n); }
  SmallVector(size_type n, const T& value) { assign(n, value); }
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit on purpose
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(std::move(o)); }
  ~SmallVector() { release(); }

  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(std::move(o));
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> il) {
    assign(il.begin(), il.end());
    return *this;
  }
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT: implicit on purpose

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  T& operator[](size_type i) noexcept { return data_[i]; }
  const T& operator[](size_type i) const noexcept { return data_[i]; }
  T& at(size_type i) {
    if (i >= size_) throw std::out_of_range("SmallVector::at: index out of range");
    return data_[i];
  }
  const T& at(size_type i) const { return const_cast<SmallVector*>(this)->at(i); }
  T& front() noexcept { return data_[0]; }
  const T& front() const noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }

  void reserve(size_type n) {
    if (n <= capacity_) return;
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{alignof(T)}));
    std::uninitialized_move(data_, data_ + size_, fresh);
    std::destroy(data_, data_ + size_);
    free_heap();
    data_ = fresh;
    capacity_ = n;
  }
  void clear() noexcept {
    std::destroy(data_, data_ + size_);
    size_ = 0;
  }
  void resize(size_type n) {
    if (n < size_) return shrink(n);
    reserve(n);
    std::uninitialized_value_construct(data_ + size_, data_ + n);
    size_ = n;
  }
  void resize(size_type n, const T& value) {
    if (n < size_) return shrink(n);
    reserve(n);
    std::uninitialized_fill(data_ + size_, data_ + n, value);
    size_ = n;
  }
  void assign(size_type n, const T& value) {
    const T copy = value;  // value may live in this vector
    clear();
    reserve(n);
    std::uninitialized_fill(data_, data_ + n, copy);
    size_ = n;
  }
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
  void assign(It first, It last) {
    if constexpr (std::is_base_of_v<std::forward_iterator_tag, typename std::iterator_traits<It>::iterator_category>) {
      const auto n = static_cast<size_type>(std::distance(first, last));
      if (n > capacity_) {  // a fresh block first: [first, last) may point into this vector
        SmallVector tmp;
        tmp.reserve(n);
        std::uninitialized_copy(first, last, tmp.data_);
        tmp.size_ = n;
        *this = std::move(tmp);
        return;
      }
      clear();
      std::uninitialized_copy(first, last, data_);
      size_ = n;
    } else {
      clear();
      for (; first != last; ++first) push_back(*first);
    }
  }
  void assign(std::initializer_list<T> il) { assign(il.begin(), il.end()); }

  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      T value(std::forward<Args>(args)...);  // the arguments may refer into this vector
      grow(size_ + 1);
      ::new (static_cast<void*>(data_ + size_)) T(std::move(value));
    } else {
      ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
    }
    return data_[size_++];
  }
  void pop_back() noexcept { shrink(size_ - 1); }

  iterator insert(const_iterator pos, const T& value) { return insert(pos, size_type{1}, value); }
  iterator insert(const_iterator pos, size_type n, const T& value) {
    const T copy = value;
    const auto at = static_cast<size_type>(pos - data_);
    open_gap(at, n);
    std::fill(data_ + at, data_ + at + n, copy);
    return data_ + at;
  }
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
  iterator insert(const_iterator pos, It first, It last) {
    const SmallVector copy(first, last);  // the range may point into this vector
    const auto at = static_cast<size_type>(pos - data_);
    open_gap(at, copy.size());
    std::copy(copy.begin(), copy.end(), data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> il) { return insert(pos, il.begin(), il.end()); }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_type>(first - data_);
    const auto n = static_cast<size_type>(last - first);
    std::move(data_ + at + n, data_ + size_, data_ + at);
    shrink(size_ - n);
    return data_ + at;
  }
  void swap(SmallVector& o) noexcept {
    SmallVector tmp(std::move(o));
    o = std::move(*this);
    *this = std::move(tmp);
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend auto operator<=>(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* inline_data() noexcept { return std::launder(reinterpret_cast<T*>(inline_)); }
  bool on_heap() const noexcept { return capacity_ > N; }
  void free_heap() noexcept {
    if (on_heap()) ::operator delete(data_, std::align_val_t{alignof(T)});
  }
  void release() noexcept {
    std::destroy(data_, data_ + size_);
    free_heap();
    data_ = inline_data();
    size_ = 0;
    capacity_ = N;
  }
  /// Moves o's elements (or its heap block) here; this vector is empty and inline.
  void take(SmallVector&& o) noexcept {
    if (o.on_heap()) {
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_data();
      o.size_ = 0;
      o.capacity_ = N;
      return;
    }
    std::uninitialized_move(o.data_, o.data_ + o.size_, data_);
    size_ = o.size_;
    o.clear();
  }
  void grow(size_type need) { reserve(std::max(need, capacity_ * 2)); }
  void shrink(size_type n) noexcept {
    std::destroy(data_ + n, data_ + size_);
    size_ = n;
  }
  /// Makes room for n elements at `at` (value-initialised slots).
  void open_gap(size_type at, size_type n) {
    if (size_ + n > capacity_) grow(size_ + n);
    std::uninitialized_value_construct(data_ + size_, data_ + size_ + n);
    std::move_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += n;
  }

  T* data_ = inline_data();
  size_type size_ = 0;
  size_type capacity_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace cupric
