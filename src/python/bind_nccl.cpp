// bind_nccl.cpp — cupric.cuda.nccl's bindings: NCCL's version and unique ids, communicators, and
// the collectives on device arrays (cupric, PyTorch, __cuda_array_interface__, DLPack) and
// streams. Every array is checked (contiguous, on the communicator's device, dtypes and sizes that
// agree) before NCCL is called, and ordered after the work that produces it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bind_cuda.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/cuda/nccl.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/stream.hpp"
#include "foreign_array.hpp"
#include "py_types.hpp"

namespace cupric::py {

namespace {

namespace nc = cuda::nccl;

/// A device array imported for a collective: contiguous, on `device`.
struct Operand {
  ForeignArray array;
  std::size_t count = 0;
};

Operand operand(nb::handle obj, const char* what, int device, const runtime::Stream& stream) {
  ImportOptions options;
  options.consumer_stream = stream.handle();
  options.device_only = true;
  std::optional<ForeignArray> f = import_foreign(obj, kArgumentOrder, options);
  if (!f)
    throw TypeError(cat("cupric.cuda.nccl: ", what, " must be a device array (cupric, PyTorch, CuPy, ",
                        "__cuda_array_interface__ or DLPack), got ", nb::type_name(obj.type()).c_str()));
  if (f->device.is_cpu() || f->device.index != device)
    throw ValueError(
        cat("cupric.cuda.nccl: ", what, " is on ", f->device.str(), ", the communicator on cuda:", device));
  std::int64_t expect = 1;
  for (int d = f->ndim() - 1; d >= 0; --d) {
    const auto k = static_cast<std::size_t>(d);
    if (f->shape[k] > 1 && f->strides[k] != expect)
      throw ValueError(cat("cupric.cuda.nccl: ", what, " must be C-contiguous (shape ", shape_str(f->shape),
                           ", strides ", shape_str(f->strides), " elements)"));
    expect *= f->shape[k];
  }
  Operand o;
  o.count = static_cast<std::size_t>(shape_size(f->shape));
  o.array = std::move(*f);
  return o;
}

void same_dtype(const Operand& a, const Operand& b) {
  if (a.array.dtype != b.array.dtype)
    throw TypeError(cat("cupric.cuda.nccl: send is ", name(a.array.dtype), ", recv ", name(b.array.dtype),
                        " (one dtype for both)"));
}

void counts(const Operand& send, const Operand& recv, std::size_t send_per, std::size_t recv_per, const char* rule) {
  if (send.count * send_per != recv.count * recv_per)
    throw ValueError(cat("cupric.cuda.nccl: send has ", send.count, " elements, recv ", recv.count, " (", rule, ")"));
}

/// Queues one NCCL call on `stream` after the operands' producers; the written array is noted.
template <class Call>
void issue(const nc::Communicator& c, const runtime::Stream& stream, std::vector<const Operand*> reads,
           const Operand* written, Call call) {
  if (c.closed()) throw ValueError("cupric.cuda.nccl: the communicator was destroyed");
  runtime::StreamState& state = *stream.state();
  for (const Operand* o : reads) order_before_use(o->array.device_argument(), state);
  if (written) order_before_use(written->array.device_argument(), state);
  runtime::activate_device(c.device());
  {
    nb::gil_scoped_release release;  // a collective may wait for the other ranks to join
    call(state.handle);
  }
  if (written) note_written(written->array.device_argument(), state);
}

class PyCommunicator {
 public:
  explicit PyCommunicator(nc::Communicator c) : c_(std::make_shared<nc::Communicator>(std::move(c))) {}
  nc::Communicator& get() const { return *c_; }

 private:
  std::shared_ptr<nc::Communicator> c_;
};

runtime::Stream stream_of(StreamLike stream, int device) { return stream_from_py(stream, device); }

/// A collective's send and recv, checked: on the communicator's device, one dtype NCCL has, and
/// send's count x send_per == recv's count x recv_per (`rule` says it in the error).
struct Pair {
  runtime::Stream stream;
  Operand send, recv;
  cuda::ncclDataType type;
};

Pair pair(const nc::Communicator& c, nb::handle send, nb::handle recv, StreamLike stream, std::size_t send_per,
          std::size_t recv_per, const char* rule) {
  runtime::Stream s = stream_of(stream, c.device());
  Operand a = operand(send, "send", c.device(), s), b = operand(recv, "recv", c.device(), s);
  same_dtype(a, b);
  counts(a, b, send_per, recv_per, rule);
  const cuda::ncclDataType t = nc::data_type(a.array.dtype);
  return {std::move(s), std::move(a), std::move(b), t};
}

void check_rank(int r, const nc::Communicator& c, const char* what) {
  if (r < 0 || r >= c.size()) throw ValueError(cat("cupric.cuda.nccl: ", what, " ", r, " of ", c.size(), " ranks"));
}

/// ncclSend (`sending`) or ncclRecv of one array with rank `peer`.
void point_to_point(const nc::Communicator& c, nb::handle array, int peer, StreamLike stream, bool sending) {
  runtime::Stream s = stream_of(stream, c.device());
  const Operand a = operand(array, "array", c.device(), s);
  check_rank(peer, c, "peer");
  const cuda::ncclDataType t = nc::data_type(a.array.dtype);
  void* data = reinterpret_cast<void*>(a.array.data);
  issue(c, s, sending ? std::vector<const Operand*>{&a} : std::vector<const Operand*>{}, sending ? nullptr : &a,
        [&](cuda::CUstream h) {
          nc::check(sending ? cuda::nccl_api().Send(data, a.count, t, peer, c.handle(), h)
                            : cuda::nccl_api().Recv(data, a.count, t, peer, c.handle(), h),
                    sending ? "ncclSend" : "ncclRecv", c.handle());
        });
}

}  // namespace

void bind_cuda_nccl(nb::module_& m) {
  m.def(
      "nccl_version", [] { return nc::version(); },
      "NCCL's version code (major * 10000 + minor * 100 + patch); loads NCCL (LibraryNotFoundError naming "
      "nvidia-nccl-cu13 where it is missing).");
  m.def(
      "nccl_unique_id",
      [] {
        const nc::UniqueId id = nc::unique_id();
        return nb::bytes(id.data(), id.size());
      },
      "A new NCCL unique id (128 bytes): one rank makes it, every rank of the communicator passes it to init_rank.");
  m.def("nccl_group_start", &nc::group_start, "ncclGroupStart: the following calls are issued as one.");
  m.def("nccl_group_end", &nc::group_end, "ncclGroupEnd.");

  nb::class_<PyCommunicator>(m, "NcclCommunicator", "One rank of an NCCL communicator, on one device.")
      .def_static(
          "init_rank",
          [](int nranks, nb::bytes id, int rank, int device) {
            if (id.size() != nc::UniqueId{}.size())
              throw ValueError(
                  cat("cupric.cuda.nccl: a unique id is ", nc::UniqueId{}.size(), " bytes, got ", id.size()));
            nc::UniqueId u;
            std::memcpy(u.data(), id.c_str(), u.size());
            nb::gil_scoped_release release;  // blocks until every rank has joined
            return PyCommunicator(nc::Communicator::init_rank(nranks, u, rank, device));
          },
          nb::arg("nranks"), nb::arg("unique_id"), nb::arg("rank"), nb::arg("device"))
      .def_static(
          "init_all",
          [](const std::vector<int>& devices) {
            std::vector<PyCommunicator> out;
            for (nc::Communicator& c : nc::Communicator::init_all(devices)) out.emplace_back(std::move(c));
            return out;
          },
          nb::arg("devices"))
      .def_prop_ro("size", [](const PyCommunicator& c) { return c.get().size(); })
      .def_prop_ro("rank", [](const PyCommunicator& c) { return c.get().rank(); })
      .def_prop_ro("device", [](const PyCommunicator& c) { return c.get().device(); })
      .def_prop_ro("closed", [](const PyCommunicator& c) { return c.get().closed(); })
      .def("destroy", [](PyCommunicator& c) { c.get().destroy(); })
      .def("abort", [](PyCommunicator& c) { c.get().abort(); })
      .def(
          "all_reduce",
          [](PyCommunicator& pc, ArrayLike send, ArrayLike recv, const std::string& op, StreamLike stream) {
            const nc::Communicator& c = pc.get();
            const Pair p = pair(c, send, recv, stream, 1, 1, "all_reduce: as many");
            const cuda::ncclRedOp r = nc::reduce_op(op);
            issue(c, p.stream, {&p.send}, &p.recv, [&](cuda::CUstream h) {
              nc::check(cuda::nccl_api().AllReduce(reinterpret_cast<const void*>(p.send.array.data),
                                                   reinterpret_cast<void*>(p.recv.array.data), p.send.count, p.type, r,
                                                   c.handle(), h),
                        "ncclAllReduce", c.handle());
            });
          },
          nb::arg("send"), nb::arg("recv"), nb::arg("op") = "sum", nb::arg("stream").none() = nb::none())
      .def(
          "reduce",
          [](PyCommunicator& pc, ArrayLike send, ArrayLike recv, int root, const std::string& op, StreamLike stream) {
            const nc::Communicator& c = pc.get();
            const Pair p = pair(c, send, recv, stream, 1, 1, "reduce: as many");
            check_rank(root, c, "root");
            const cuda::ncclRedOp r = nc::reduce_op(op);
            issue(c, p.stream, {&p.send}, &p.recv, [&](cuda::CUstream h) {
              nc::check(cuda::nccl_api().Reduce(reinterpret_cast<const void*>(p.send.array.data),
                                                reinterpret_cast<void*>(p.recv.array.data), p.send.count, p.type, r,
                                                root, c.handle(), h),
                        "ncclReduce", c.handle());
            });
          },
          nb::arg("send"), nb::arg("recv"), nb::arg("root") = 0, nb::arg("op") = "sum",
          nb::arg("stream").none() = nb::none())
      .def(
          "broadcast",
          [](PyCommunicator& pc, ArrayLike send, ArrayLike recv, int root, StreamLike stream) {
            const nc::Communicator& c = pc.get();
            const Pair p = pair(c, send, recv, stream, 1, 1, "broadcast: as many");
            check_rank(root, c, "root");
            issue(c, p.stream, {&p.send}, &p.recv, [&](cuda::CUstream h) {
              nc::check(cuda::nccl_api().Broadcast(reinterpret_cast<const void*>(p.send.array.data),
                                                   reinterpret_cast<void*>(p.recv.array.data), p.send.count, p.type,
                                                   root, c.handle(), h),
                        "ncclBroadcast", c.handle());
            });
          },
          nb::arg("send"), nb::arg("recv"), nb::arg("root") = 0, nb::arg("stream").none() = nb::none())
      .def(
          "all_gather",
          [](PyCommunicator& pc, ArrayLike send, ArrayLike recv, StreamLike stream) {
            const nc::Communicator& c = pc.get();
            const Pair p = pair(c, send, recv, stream, static_cast<std::size_t>(c.size()), 1,
                                "all_gather: recv holds size x send");
            issue(c, p.stream, {&p.send}, &p.recv, [&](cuda::CUstream h) {
              nc::check(cuda::nccl_api().AllGather(reinterpret_cast<const void*>(p.send.array.data),
                                                   reinterpret_cast<void*>(p.recv.array.data), p.send.count, p.type,
                                                   c.handle(), h),
                        "ncclAllGather", c.handle());
            });
          },
          nb::arg("send"), nb::arg("recv"), nb::arg("stream").none() = nb::none())
      .def(
          "reduce_scatter",
          [](PyCommunicator& pc, ArrayLike send, ArrayLike recv, const std::string& op, StreamLike stream) {
            const nc::Communicator& c = pc.get();
            const Pair p = pair(c, send, recv, stream, 1, static_cast<std::size_t>(c.size()),
                                "reduce_scatter: send holds size x recv");
            const cuda::ncclRedOp r = nc::reduce_op(op);
            issue(c, p.stream, {&p.send}, &p.recv, [&](cuda::CUstream h) {
              nc::check(cuda::nccl_api().ReduceScatter(reinterpret_cast<const void*>(p.send.array.data),
                                                       reinterpret_cast<void*>(p.recv.array.data), p.recv.count, p.type,
                                                       r, c.handle(), h),
                        "ncclReduceScatter", c.handle());
            });
          },
          nb::arg("send"), nb::arg("recv"), nb::arg("op") = "sum", nb::arg("stream").none() = nb::none())
      .def(
          "send",
          [](PyCommunicator& pc, ArrayLike array, int peer, StreamLike stream) {
            point_to_point(pc.get(), array, peer, stream, true);
          },
          nb::arg("array"), nb::arg("peer"), nb::arg("stream").none() = nb::none())
      .def(
          "recv",
          [](PyCommunicator& pc, ArrayLike array, int peer, StreamLike stream) {
            point_to_point(pc.get(), array, peer, stream, false);
          },
          nb::arg("array"), nb::arg("peer"), nb::arg("stream").none() = nb::none());
}

}  // namespace cupric::py
