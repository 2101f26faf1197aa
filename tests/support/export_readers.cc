#include "tests/support/export_readers.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace dvexport::testing {

FileExport ReadFileExport(v1::DataValueExport::Stub* stub, const v1::ExportFileRequest& request,
                          std::chrono::seconds timeout,
                          const std::function<void(int)>& after_chunk) {
  FileExport result;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  auto reader = stub->ExportFile(&context, request);
  v1::FileChunk chunk;
  int chunks = 0;
  while (reader->Read(&chunk)) {
    if (chunk.has_trailer()) {
      result.has_trailer = true;
      result.values = chunk.trailer().values();
      continue;
    }
    result.bytes += chunk.data();
    if (after_chunk != nullptr) after_chunk(++chunks);
  }
  result.status = reader->Finish();
  return result;
}

std::vector<std::string> ReadSortedStreamValues(v1::DataValueExport::Stub* stub,
                                                const v1::ExportRequest& query,
                                                std::chrono::seconds timeout,
                                                grpc::Status* status) {
  std::vector<std::string> values;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  auto reader = stub->StreamDataValues(&context, query);
  v1::DataValueBatch batch;
  bool last = false;
  while (reader->Read(&batch)) {
    for (const v1::DataValue& value : batch.data_values()) {
      values.push_back(value.SerializeAsString());
    }
    last = batch.last();
  }
  *status = reader->Finish();
  EXPECT_TRUE(!status->ok() || last) << "the stream ended without its last batch";
  std::sort(values.begin(), values.end());
  return values;
}

nlohmann::json SortedValues(const std::string& bytes) {
  nlohmann::json doc = nlohmann::json::parse(bytes);
  std::vector<std::string> values;
  for (const nlohmann::json& v : doc.at("dataValues")) values.push_back(v.dump());
  std::sort(values.begin(), values.end());
  doc["dataValues"] = values;
  return doc;
}

}  // namespace dvexport::testing
