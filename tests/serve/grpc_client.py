"""A KServe v2 gRPC client for the `kiln serve` tests from Debian's python3-grpcio alone: the
messages are built at run time from kiln's proto/kserve/grpc_service.proto (protoc writes a
descriptor set), so no generated code or grpcio-tools is needed."""
import os
import subprocess
import tempfile

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

SERVICE = "inference.GRPCInferenceService"
RPCS = ["ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata", "ModelInfer"]


class Client:
    def __init__(self, proto_path, port):
        desc = os.path.join(tempfile.mkdtemp(prefix="kiln_grpc_"), "kserve.desc")
        subprocess.run(["protoc", f"--proto_path={os.path.dirname(proto_path)}", f"--descriptor_set_out={desc}",
                        os.path.basename(proto_path)], check=True)
        with open(desc, "rb") as f:
            files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        pool = descriptor_pool.DescriptorPool()
        for fd in files.file:
            pool.Add(fd)
        factory = message_factory.MessageFactory(pool)
        self.msg = lambda name: factory.GetPrototype(pool.FindMessageTypeByName("inference." + name))
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self._calls = {}
        for rpc in RPCS:
            self._calls[rpc] = self.channel.unary_unary(
                f"/{SERVICE}/{rpc}", request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=self.msg(rpc + "Response").FromString)

    def call(self, rpc, **fields):
        """Calls `rpc` with a request built from `fields`; returns the response or raises
        grpc.RpcError (its .code() is the status)."""
        request = self.msg(rpc + "Request")(**fields)
        return self._calls[rpc](request, timeout=60)

    def close(self):
        self.channel.close()
