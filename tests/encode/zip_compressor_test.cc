#include "service/encode/zip_compressor.h"

#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/encode/file_compressor_testing.h"

namespace dvexport::encode {
namespace {

constexpr int64_t kMarch5th2024At060708 = 1'709'618'828;  // 2024-03-05T06:07:08Z

uint32_t Read16(const std::string& bytes, size_t at) {
  return static_cast<uint8_t>(bytes.at(at)) | static_cast<uint8_t>(bytes.at(at + 1)) << 8;
}
uint32_t Read32(const std::string& bytes, size_t at) {
  return Read16(bytes, at) | Read16(bytes, at + 2) << 16;
}
uint64_t Read64(const std::string& bytes, size_t at) {
  return Read32(bytes, at) | uint64_t{Read32(bytes, at + 4)} << 32;
}

// The parts of a one-entry archive, read front to back as a streaming reader would, then
// checked against the central directory.
struct ParsedZip {
  std::string name;
  std::string content;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
};

// Parses "zip" (small archives only: inflates the entry in memory), with gtest expectations on
// every field this writer promises.
ParsedZip ParseOneEntryZip(const std::string& zip) {
  ParsedZip parsed;
  EXPECT_EQ(Read32(zip, 0), 0x04034b50u) << "local file header";
  EXPECT_EQ(Read16(zip, 4), 20u) << "version needed";
  EXPECT_EQ(Read16(zip, 6), 0x0808u) << "flags: data descriptor, UTF-8";
  EXPECT_EQ(Read16(zip, 8), 8u) << "deflate";
  EXPECT_EQ(Read32(zip, 14), 0u) << "no CRC in the local header";
  EXPECT_EQ(Read32(zip, 18), 0u) << "no sizes in the local header";
  EXPECT_EQ(Read32(zip, 22), 0u);
  const uint32_t name_length = Read16(zip, 26);
  EXPECT_EQ(Read16(zip, 28), 0u) << "no extra field";
  parsed.name = zip.substr(30, name_length);
  const size_t data_start = 30 + name_length;

  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, -15), Z_OK);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zip.data() + data_start));
  stream.avail_in = static_cast<uInt>(zip.size() - data_start);
  char out[16384];
  int result;
  do {
    stream.next_out = reinterpret_cast<Bytef*>(out);
    stream.avail_out = sizeof(out);
    result = inflate(&stream, Z_NO_FLUSH);
    parsed.content.append(out, sizeof(out) - stream.avail_out);
  } while (result == Z_OK);
  EXPECT_EQ(result, Z_STREAM_END) << "the deflate stream does not end";
  parsed.compressed_size = stream.total_in;
  inflateEnd(&stream);

  const size_t descriptor = data_start + parsed.compressed_size;
  EXPECT_EQ(Read32(zip, descriptor), 0x08074b50u) << "data descriptor";
  parsed.crc = Read32(zip, descriptor + 4);
  EXPECT_EQ(parsed.crc, ZlibCrc32(parsed.content));
  EXPECT_EQ(Read32(zip, descriptor + 8), parsed.compressed_size);
  EXPECT_EQ(Read32(zip, descriptor + 12), parsed.content.size());

  const size_t central = descriptor + 16;
  EXPECT_EQ(Read32(zip, central), 0x02014b50u) << "central directory header";
  EXPECT_EQ(Read16(zip, central + 8), 0x0808u);
  EXPECT_EQ(Read32(zip, central + 16), parsed.crc);
  EXPECT_EQ(Read32(zip, central + 20), parsed.compressed_size);
  EXPECT_EQ(Read32(zip, central + 24), parsed.content.size());
  EXPECT_EQ(zip.substr(central + 46, Read16(zip, central + 28)), parsed.name);
  const size_t end = central + 46 + name_length;
  EXPECT_EQ(Read32(zip, end), 0x06054b50u) << "end of central directory";
  EXPECT_EQ(Read16(zip, end + 10), 1u) << "one entry";
  EXPECT_EQ(Read32(zip, end + 12), end - central) << "central directory size";
  EXPECT_EQ(Read32(zip, end + 16), central) << "central directory offset";
  EXPECT_EQ(zip.size(), end + 22) << "bytes after the end record";
  return parsed;
}

std::unique_ptr<ZipCompressor> CreateOrDie(const std::string& name = "dataValues.json",
                                           int level = 1) {
  ZipOptions options;
  options.entry_name = name;
  options.modified_unix_seconds = kMarch5th2024At060708;
  options.deflate.level = level;
  absl::StatusOr<std::unique_ptr<ZipCompressor>> created = ZipCompressor::Create(options);
  EXPECT_TRUE(created.ok()) << created.status();
  return *std::move(created);
}

class ZipFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/zip_compressor_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = absl::StrCat(dir_, "/", name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // Runs "command" through the shell; its exit status (0 is success) and what it printed.
  static int Run(const std::string& command, std::string* output) {
    FILE* pipe = popen(absl::StrCat(command, " 2>&1").c_str(), "r");
    if (pipe == nullptr) return -1;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output->append(buffer, n);
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static bool Have(const std::string& program) {
    std::string ignored;
    return Run(absl::StrCat("command -v ", program), &ignored) == 0;
  }

  static std::string Python(const std::string& zip, const std::string& name, uint64_t size,
                            uint32_t crc, const std::string& expected_file_or_flag = "") {
    std::string command = absl::StrCat("python3 " DVEXPORT_TEST_SOURCE_DIR "/read_zip.py '", zip,
                                       "' '", name, "' ", size, " ", crc);
    if (!expected_file_or_flag.empty()) absl::StrAppend(&command, " '", expected_file_or_flag, "'");
    return command;
  }

  static std::string Java(const std::string& zip, const std::string& name, uint64_t size,
                          uint32_t crc) {
    return absl::StrCat("java -Xshare:auto " DVEXPORT_TEST_SOURCE_DIR "/ReadZip.java '", zip, "' '",
                        name, "' ", size, " ", crc);
  }

  std::string dir_;
};

TEST(ZipCompressorTest, RandomChunksRoundTrip) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const std::string text = ExportLikeText(rng() % 700'000, seed);
    std::unique_ptr<ZipCompressor> zip = CreateOrDie("dataValues.csv", 1 + seed % 9);
    const std::string archive = CompressInChunks(*zip, text, 1 + rng() % 200'000, seed);
    ParsedZip parsed = ParseOneEntryZip(archive);
    EXPECT_EQ(parsed.name, "dataValues.csv");
    ASSERT_TRUE(parsed.content == text) << "seed " << seed;
    EXPECT_EQ(zip->input_crc32(), ZlibCrc32(text));
  }
}

TEST(ZipCompressorTest, FirstCompressWritesTheLocalHeader) {
  std::unique_ptr<ZipCompressor> zip = CreateOrDie();
  std::string out;
  zip->Compress("{", &out);
  ASSERT_EQ(out.size(), 30u + 15u) << "the local header and the name, no data yet";
  EXPECT_EQ(out.substr(0, 4), std::string("PK\x03\x04", 4));
  EXPECT_EQ(out.substr(30), "dataValues.json");
  // The MS-DOS time and date of 2024-03-05 06:07:08 UTC.
  EXPECT_EQ(Read16(out, 10), 6u << 11 | 7u << 5 | 8u / 2);
  EXPECT_EQ(Read16(out, 12), (2024u - 1980) << 9 | 3u << 5 | 5u);
}

TEST(ZipCompressorTest, EmptyEntry) {
  std::unique_ptr<ZipCompressor> zip = CreateOrDie();
  std::string out;
  zip->Finish(&out);
  ParsedZip parsed = ParseOneEntryZip(out);
  EXPECT_EQ(parsed.content, "");
  EXPECT_EQ(zip->input_crc32(), 0u);
}

TEST(ZipCompressorTest, AfterFinishANewArchiveStarts) {
  std::unique_ptr<ZipCompressor> zip = CreateOrDie();
  const std::string first = CompressInChunks(*zip, ExportLikeText(100'000, 1), 5000, 1);
  const std::string second_text = ExportLikeText(50'000, 2);
  const std::string second = CompressInChunks(*zip, second_text, 5000, 2);
  EXPECT_EQ(ParseOneEntryZip(second).content, second_text);
  EXPECT_EQ(zip->input_crc32(), ZlibCrc32(second_text));
}

TEST(ZipCompressorTest, RejectsBadNamesAndLevels) {
  ZipOptions options;
  EXPECT_EQ(ZipCompressor::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.entry_name = std::string(65536, 'a');
  EXPECT_EQ(ZipCompressor::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.entry_name = "dataValues.json";
  options.deflate.level = 10;
  EXPECT_EQ(ZipCompressor::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ZipFiles, PythonUnzipAndJavaReadIt) {
  const std::string text = ExportLikeText(3'000'000);
  const std::string expected = Write("expected", text);
  // Level 1 is ISA-L's deflate, 6 zlib's.
  for (int level : {1, 6}) {
    SCOPED_TRACE(absl::StrCat("level ", level));
    std::unique_ptr<ZipCompressor> zip =
        CreateOrDie("dataValues_2024-01-01_2024-12-31.json", level);
    const std::string path =
        Write(absl::StrCat("a", level, ".json.zip"), CompressInChunks(*zip, text, 300'000, 3));
    std::string output;
    EXPECT_EQ(Run(Python(path, "dataValues_2024-01-01_2024-12-31.json", text.size(),
                         ZlibCrc32(text), expected),
                  &output),
              0)
        << output;
    output.clear();
    ASSERT_TRUE(Have("unzip")) << "unzip is missing (scripts/lib/deps.sh installs it)";
    EXPECT_EQ(Run(absl::StrCat("unzip -t '", path, "'"), &output), 0) << output;
    EXPECT_NE(output.find("No errors detected"), std::string::npos) << output;
    output.clear();
    EXPECT_EQ(Run(absl::StrCat("unzip -p '", path, "' | cmp - '", expected, "'"), &output), 0)
        << output;
    if (!Have("java")) continue;
    output.clear();
    EXPECT_EQ(Run(Java(path, "dataValues_2024-01-01_2024-12-31.json", text.size(), ZlibCrc32(text)),
                  &output),
              0)
        << output;
  }
  if (!Have("java")) GTEST_SKIP() << "no java: ZipInputStream not tried";
}

TEST_F(ZipFiles, EmptyEntryIsReadable) {
  std::unique_ptr<ZipCompressor> zip = CreateOrDie("dataValues.csv");
  std::string archive;
  zip->Finish(&archive);
  const std::string path = Write("empty.zip", archive);
  std::string output;
  EXPECT_EQ(Run(Python(path, "dataValues.csv", 0, 0), &output), 0) << output;
  output.clear();
  EXPECT_EQ(Run(absl::StrCat("unzip -t '", path, "'"), &output), 0) << output;
}

constexpr uint64_t kZip64Size = (uint64_t{4} << 30) + (3 << 20);

struct Zip64Archive {
  std::string bytes;
  uint32_t crc = 0;  // Of the entry's content.
};

// An entry of 4 GiB + 3 MiB (zeros and text, compressed to a few MiB), built once per process.
const Zip64Archive& BigArchive() {
  static const Zip64Archive* archive = [] {
    auto* built = new Zip64Archive;
    std::unique_ptr<ZipCompressor> zip = CreateOrDie();
    const std::string text = ExportLikeText(1 << 20);
    const std::string zeros(4 << 20, '\0');
    uint64_t fed = 0;
    while (fed < kZip64Size) {
      const std::string& piece = (fed / zeros.size()) % 64 == 0 ? text : zeros;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(piece.size(), kZip64Size - fed));
      zip->Compress(std::string_view(piece).substr(0, n), &built->bytes);
      built->crc = static_cast<uint32_t>(
          crc32(built->crc, reinterpret_cast<const Bytef*>(piece.data()), static_cast<uInt>(n)));
      fed += n;
    }
    zip->Finish(&built->bytes);
    EXPECT_EQ(zip->input_crc32(), built->crc);
    return built;
  }();
  return *archive;
}

// Past 4 GiB: 8-byte sizes in the data descriptor, the ZIP64 extra field, the ZIP64 end records.
TEST_F(ZipFiles, Zip64BeyondFourGiB) {
#if defined(__SANITIZE_ADDRESS__)
  // Half a minute or more of zlib alone: the plain build runs it (CI stays under 40 minutes).
  GTEST_SKIP() << "4 GiB through deflate: run in the build without sanitizers";
#endif
  const std::string& archive = BigArchive().bytes;
  const uint32_t crc = BigArchive().crc;
  ASSERT_LT(archive.size(), 100u << 20);
  // The tail: descriptor (24), central header (46 + 15 + 20), ZIP64 end (56), locator (20), end
  // record (22).
  const size_t end = archive.size() - 22;
  ASSERT_EQ(Read32(archive, end), 0x06054b50u);
  const size_t locator = end - 20;
  ASSERT_EQ(Read32(archive, locator), 0x07064b50u);
  const size_t zip64_end = static_cast<size_t>(Read64(archive, locator + 8));
  ASSERT_EQ(zip64_end, locator - 56);
  EXPECT_EQ(Read32(archive, zip64_end), 0x06064b50u);
  const size_t central = static_cast<size_t>(Read64(archive, zip64_end + 48));
  EXPECT_EQ(Read32(archive, end + 16), central) << "the offset fits 32 bits here";
  ASSERT_EQ(Read32(archive, central), 0x02014b50u);
  EXPECT_EQ(Read16(archive, central + 6), 45u) << "version needed: ZIP64";
  EXPECT_EQ(Read32(archive, central + 24), 0xffffffffu) << "uncompressed size in the extra field";
  EXPECT_EQ(Read16(archive, central + 30), 12u) << "extra field: ZIP64, one size";
  EXPECT_EQ(Read16(archive, central + 46 + 15), 0x0001u);
  EXPECT_EQ(Read64(archive, central + 46 + 15 + 4), kZip64Size);
  const size_t descriptor = central - 24;
  ASSERT_EQ(Read32(archive, descriptor), 0x08074b50u);
  EXPECT_EQ(Read32(archive, descriptor + 4), crc);
  EXPECT_EQ(Read64(archive, descriptor + 8), descriptor - 45) << "compressed size";
  EXPECT_EQ(Read64(archive, descriptor + 16), kZip64Size);

  const std::string path = Write("big.zip", archive);
  std::string output;
  EXPECT_EQ(Run(Python(path, "dataValues.json", kZip64Size, crc, "--directory-only"), &output), 0)
      << output;
}

// Reading the 4 GiB back three times takes minutes on a busy machine: on request only.
TEST_F(ZipFiles, Zip64EntryReadByPythonUnzipAndJava) {
  if (std::getenv("DVEXPORT_ZIP64_READERS") == nullptr) {
    GTEST_SKIP() << "set DVEXPORT_ZIP64_READERS=1 to read the 4 GiB entry with Python, unzip, Java";
  }
  const std::string path = Write("big.zip", BigArchive().bytes);
  const uint32_t crc = BigArchive().crc;
  std::string output;
  EXPECT_EQ(Run(Python(path, "dataValues.json", kZip64Size, crc), &output), 0) << output;
  output.clear();
  EXPECT_EQ(Run(absl::StrCat("unzip -t '", path, "'"), &output), 0) << output;
  if (!Have("java")) GTEST_SKIP() << "no java: ZipInputStream not tried";
  output.clear();
  EXPECT_EQ(Run(Java(path, "dataValues.json", kZip64Size, crc), &output), 0) << output;
}

}  // namespace
}  // namespace dvexport::encode
