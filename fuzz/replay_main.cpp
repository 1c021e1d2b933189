// A main() for the fuzz targets without libFuzzer: runs
// LLVMFuzzerTestOneInput once over every file named on the command line, and
// over every regular file in each directory named (in name order, not
// recursive). Used by ctest (fuzz.replay.<target>) to replay the corpus in
// every build, with any compiler.
//
// Exits 1 if nothing was run (an empty or missing corpus is an error: a
// replay of nothing cannot fail); a failed invariant traps and kills it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool run(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  // An exact-size heap copy, so that AddressSanitizer (if on) catches any read
  // past the end of the input.
  auto copy = std::make_unique<std::uint8_t[]>(bytes.size());
  std::copy(bytes.begin(), bytes.end(), copy.get());
  std::printf("%s (%zu bytes)\n", file.c_str(), bytes.size());
  std::fflush(stdout);  // name the input before a trap ends the process
  LLVMFuzzerTestOneInput(copy.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t ran = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(arg, ec))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        ok = run(f) && ok;
        ++ran;
      }
    } else {
      ok = run(arg) && ok;
      ++ran;
    }
  }
  std::printf("replayed %zu inputs\n", ran);
  if (ran == 0) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...  (nothing to replay)\n", argv[0]);
    return 1;
  }
  return ok ? 0 : 1;
}
