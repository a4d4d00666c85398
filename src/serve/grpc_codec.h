// Conversion between the KServe v2 gRPC messages (proto/kserve/grpc_service.proto) and kiln's
// protocol-neutral InferRequest/InferResponse. Only in builds with gRPC (KILN_HAVE_GRPC).
#pragma once
#if KILN_HAVE_GRPC
#include "kserve/grpc_service.pb.h"
#include "serve/infer_types.h"

namespace kiln::serve {

// Reads tensors from raw_input_contents (one entry per input) or from each input's typed
// contents; kBadRequest naming the tensor for an unknown datatype, a negative dim, a size
// that does not match the shape, a value out of its datatype's range, or FP16/BF16 sent as
// typed contents (the protocol carries those as raw bytes only). The "timeout" parameter
// (microseconds) sets the request's deadline.
ServeStatus decode_infer_request(const inference::ModelInferRequest& in, InferRequest* out);

// Writes every output as raw_output_contents (the protocol's fastest form, and the only one
// for FP16/BF16).
void encode_infer_response(const InferResponse& in, inference::ModelInferResponse* out);

}  // namespace kiln::serve
#endif
