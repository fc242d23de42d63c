#include "pipeline/warm_index.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>

#include "util/fields.h"
#include "util/fs.h"
#include "util/temp_dir_for_test.h"

namespace jaxcc::pipeline {
namespace {

using argspec::AttrType;
using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

std::vector<FunctionSpec> SampleSpecs() {
  FunctionSpec scale;
  scale.name = "scale_by";
  scale.namespaces = {"ops", "detail"};
  scale.source_index = 2;
  scale.sharding_rule = "b i -> b i";
  scale.params = {{ParamKind::kArg, "x", std::nullopt},
                  {ParamKind::kRet, "out", std::nullopt},
                  {ParamKind::kAttr, "factor", AttrType::kBFloat16},
                  {ParamKind::kStream, "stream", std::nullopt}};
  scale.params[0].dtype = argspec::ElementType::kComplex64;  // declared dtypes (decision 158)
  scale.params[1].dtype = argspec::ElementType::kUInt16;
  FunctionSpec plain;
  plain.name = "add_one";
  plain.params = {{ParamKind::kArg, "", std::nullopt}, {ParamKind::kRet, "", std::nullopt}};
  return {scale, plain};
}

WarmRecord SampleRecord() {
  WarmRecord record;
  record.key = "d8c72319af17c31155d33da77e728a12";
  record.entry.library_file = "m.9fc6090f2ecc.so";
  record.entry.library_sha256 = "9fc6090f2eccdcea";
  record.entry.dependencies = {
      {"/src/dir with space/k,1:2.h", 120, 1795489931403328567, "ab", 1795489931403328999, 77}};
  record.entry.shadows = {"/vendor/k,1:2.h", "/src/other/k,1:2.h"};
  record.specs = SampleSpecs();
  record.cuda_archs = {"90", "80"};
  record.cuda_archs_source = "compute_capability";
  record.watched = {{"/usr/bin/g++", {true, 1305592, 1744025177000000000, 248222}},
                    {"/include", {true, 0, 17, 9}}};
  return record;
}

TEST(WarmIndex, RecordsRoundTripEveryField) {
  auto back = DecodeWarmRecord(EncodeWarmRecord(SampleRecord()));
  ASSERT_TRUE(back.has_value());
  WarmRecord want = SampleRecord();
  EXPECT_EQ(back->key, want.key);
  EXPECT_EQ(back->entry.library_file, want.entry.library_file);
  EXPECT_EQ(back->entry.library_sha256, want.entry.library_sha256);
  ASSERT_EQ(back->entry.dependencies.size(), 1u);
  EXPECT_EQ(back->entry.dependencies[0].path, want.entry.dependencies[0].path);
  EXPECT_EQ(back->entry.dependencies[0].size, 120);
  EXPECT_EQ(back->entry.dependencies[0].mtime_ns, 1795489931403328567);
  EXPECT_EQ(back->entry.dependencies[0].sha256, "ab");
  EXPECT_EQ(back->entry.dependencies[0].ctime_ns, 1795489931403328999);
  EXPECT_EQ(back->entry.dependencies[0].inode, 77u);
  EXPECT_EQ(back->entry.shadows, want.entry.shadows);
  EXPECT_EQ(back->cuda_archs, want.cuda_archs);
  EXPECT_EQ(back->cuda_archs_source, "compute_capability");
  ASSERT_EQ(back->watched.size(), 2u);
  EXPECT_EQ(back->watched[0].path, "/usr/bin/g++");
  EXPECT_EQ(back->watched[0].stamp, want.watched[0].stamp);
  EXPECT_EQ(back->watched[1].stamp, want.watched[1].stamp);
  ASSERT_EQ(back->specs.size(), 2u);
  const FunctionSpec& s = back->specs[0];
  EXPECT_EQ(s.name, "scale_by");
  EXPECT_EQ(s.namespaces, (std::vector<std::string>{"ops", "detail"}));
  EXPECT_EQ(s.source_index, 2);
  EXPECT_EQ(s.sharding_rule, "b i -> b i");
  ASSERT_EQ(s.params.size(), 4u);
  EXPECT_EQ(s.params[2].kind, ParamKind::kAttr);
  EXPECT_EQ(s.params[2].name, "factor");
  EXPECT_EQ(s.params[2].attr_type, AttrType::kBFloat16);
  EXPECT_EQ(s.params[3].kind, ParamKind::kStream);
  EXPECT_FALSE(s.params[0].attr_type.has_value());
  EXPECT_EQ(s.params[0].dtype, argspec::ElementType::kComplex64);
  EXPECT_EQ(s.params[1].dtype, argspec::ElementType::kUInt16);
  EXPECT_FALSE(s.params[2].dtype.has_value());
  ASSERT_EQ(back->specs[1].params.size(), 2u);
  EXPECT_FALSE(back->specs[1].params[0].dtype.has_value());
}

TEST(WarmIndex, MalformedRecordsAreMissesNotCrashes) {
  std::string good = EncodeWarmRecord(SampleRecord());
  // Every truncation, a trailing byte, an older JSON record, a bad kind or attribute type.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeWarmRecord(good.substr(0, n)).has_value()) << n;
  }
  EXPECT_FALSE(DecodeWarmRecord(good + "x").has_value());
  EXPECT_FALSE(DecodeWarmRecord("{\"format\":\"jaxcc-warm-index-1\",\"key\":\"k\"}").has_value());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  EXPECT_FALSE(DecodeWarmRecord(replaced("3:arg,", "3:foo,")).has_value());
  EXPECT_FALSE(DecodeWarmRecord(replaced("8:bfloat16,", "8:float99,")).has_value());
  EXPECT_FALSE(DecodeWarmRecord(replaced("9:complex64,", "9:complex65,")).has_value());
  std::string two, minus_two;  // counts are eight-byte integer fields (util/fields.h)
  AppendIntField(two, 2);
  AppendIntField(minus_two, -2);
  EXPECT_FALSE(DecodeWarmRecord(replaced(two, minus_two)).has_value());  // a negative count
}

TEST(WarmIndex, TheFingerprintCoversTheRequestAndTheToolSearch) {
  LoadRequest request;
  request.name = "m";
  request.sources = {{"a.cc", "void f();"}};
  BuildEnvironment env;
  env.ffi_include_dir = "/ffi";
  std::string base = WarmFingerprint(request, env);
  EXPECT_EQ(base, WarmFingerprint(request, env));
  auto changed = [&](auto edit) {
    LoadRequest r = request;
    BuildEnvironment e = env;
    edit(r, e);
    return WarmFingerprint(r, e);
  };
  EXPECT_NE(base, changed([](LoadRequest& r, BuildEnvironment&) { r.sources[0].text += " "; }));
  EXPECT_NE(base, changed([](LoadRequest& r, BuildEnvironment&) { r.optimization_level = 1; }));
  EXPECT_NE(base, changed([](LoadRequest& r, BuildEnvironment&) { r.sharding["f"] = "i -> i"; }));
  EXPECT_NE(base, changed([](LoadRequest& r, BuildEnvironment&) {
              r.functions = std::vector<signature::FunctionRequest>{{"f", std::nullopt}};
            }));
  EXPECT_NE(base, changed([](LoadRequest& r, BuildEnvironment&) { r.cuda.archs = {"9.0"}; }));
  EXPECT_NE(base, changed([](LoadRequest&, BuildEnvironment& e) { e.ffi_include_dir = "/x"; }));
  EXPECT_NE(base,
            changed([](LoadRequest&, BuildEnvironment& e) { e.detected_cuda_archs = {"8.0"}; }));
  const char* old_cxx = getenv("CXX");
  std::string saved = old_cxx ? old_cxx : "";
  setenv("CXX", "/opt/other/g++", 1);
  EXPECT_NE(base, WarmFingerprint(request, env));
  if (old_cxx) {
    setenv("CXX", saved.c_str(), 1);
  } else {
    unsetenv("CXX");
  }
  EXPECT_EQ(base, WarmFingerprint(request, env));
}

TEST(WarmIndex, ADeferredFileIsFingerprintedByItsStampNotItsText) {
  LoadRequest request;
  request.name = "m";
  request.sources = {{"/src/k.cc", ""}};
  request.source_stamps = {{true, 120, 1000, 2000, 7}};
  BuildEnvironment env;
  const std::string base = WarmFingerprint(request, env);
  // Every field of the stamp counts: a rewrite moves ctime even when size and mtime are kept.
  for (int field = 0; field < 4; ++field) {
    LoadRequest other = request;
    cache::LibraryStamp& stamp = other.source_stamps[0];
    (field == 0 ? stamp.size : field == 1 ? stamp.mtime_ns : stamp.ctime_ns) += field < 3;
    if (field == 3) stamp.inode += 1;
    EXPECT_NE(WarmFingerprint(other, env), base) << "stamp field " << field;
  }
  // The same file read (a text) is another fingerprint than the file by its stamp, even with the
  // text empty: no text can pass for a stamp.
  LoadRequest read = request;
  read.source_stamps.clear();
  EXPECT_NE(WarmFingerprint(read, env), base);
  read.sources[0].text = "stamp";
  EXPECT_NE(WarmFingerprint(read, env), base);
  EXPECT_EQ(WarmFingerprint(request, env), base);
}

TEST(WarmIndex, TrimmingKeepsTheNewestRecordsAndSweepsDeadWritersTemporaries) {
  const std::string dir = testing_util::MakeTestTempDir("jaxcc-index");
  ASSERT_FALSE(dir.empty());
  auto make = [&](const std::string& name, std::int64_t age_s) {
    const std::string path = dir + "/" + name;
    ASSERT_TRUE(WriteFile(path, "r").ok());
    struct timeval times[2];
    ::gettimeofday(&times[0], nullptr);
    times[0].tv_sec -= age_s;
    times[1] = times[0];
    ASSERT_EQ(::utimes(path.c_str(), times), 0);
  };
  auto record = [](int i) { return std::string(63, 'a') + static_cast<char>('0' + i); };
  for (int i = 0; i < 10; ++i) make(record(i), 1000 - i);  // record(9) is the newest
  make(record(0) + ".tmp-dead", 7200);                     // a writer that died two hours ago
  make(record(1) + ".tmp-live", 5);                        // one writing now
  make("notes", 99999);                                    // not the index's: never touched
  // Within the limit: only the dead writer's file goes.
  EXPECT_EQ(TrimWarmIndex(dir, 10), 1);
  EXPECT_EQ(ListDir(dir).size(), 12u);
  // Over it (10 > 8): the oldest go until 6 (three quarters) are left.
  EXPECT_EQ(TrimWarmIndex(dir, 8), 4);
  std::vector<std::string> left = ListDir(dir);
  std::vector<std::string> want = {
      record(4), record(5), record(6), record(7), record(8), record(9), record(1) + ".tmp-live",
      "notes"};
  std::sort(left.begin(), left.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(left, want);
  (void)RemoveTree(dir);
}

TEST(WarmIndex, ARecordHoldsOnlyWhileItsWatchedFilesAreUnchanged) {
  const std::string dir = testing_util::MakeTestTempDir("jaxcc-warm-index");
  ASSERT_FALSE(dir.empty());
  std::string tool = JoinPath(dir, "g++");
  std::string headers = JoinPath(dir, "include");
  ASSERT_TRUE(WriteFile(tool, "#!/bin/sh\n").ok());
  ASSERT_TRUE(MakeDirs(headers).ok());
  // An hour old, as installed headers are: a new entry then surely moves the mtime.
  struct timeval past[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
  ASSERT_EQ(utimes(headers.c_str(), past), 0);
  WarmRecord record = SampleRecord();
  record.watched = {{headers, StampOf(headers)}, {tool, StampOf(tool)}};
  std::string path = WarmIndexPath(JoinPath(dir, "cache"), "f00d");
  ASSERT_TRUE(WriteWarmRecord(path, record).ok());
  auto read = ReadValidWarmRecord(path);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->key, SampleRecord().key);
  EXPECT_EQ(read->specs.size(), 2u);
  EXPECT_EQ(read->cuda_archs, (std::vector<std::string>{"90", "80"}));
  EXPECT_EQ(read->cuda_archs_source, "compute_capability");

  // A file added to a watched header directory (a reinstall) makes the record stale.
  ASSERT_TRUE(WriteFile(JoinPath(headers, "new.h"), "").ok());
  EXPECT_FALSE(ReadValidWarmRecord(path).has_value());
  record.watched[0].stamp = StampOf(headers);
  ASSERT_TRUE(WriteWarmRecord(path, record).ok());
  ASSERT_TRUE(ReadValidWarmRecord(path).has_value());

  // A replaced compiler (new inode and size) makes the record stale.
  ASSERT_TRUE(WriteFileAtomic(tool, "#!/bin/sh\necho newer\n").ok());
  EXPECT_FALSE(ReadValidWarmRecord(path).has_value());

  // A corrupt or foreign record is a miss, never an error.
  ASSERT_TRUE(WriteFile(path, "18:jaxcc-warm-index-9,").ok());
  EXPECT_FALSE(ReadValidWarmRecord(path).has_value());
  ASSERT_TRUE(WriteFile(path, "{not a record").ok());
  EXPECT_FALSE(ReadValidWarmRecord(path).has_value());
  EXPECT_FALSE(ReadValidWarmRecord(JoinPath(dir, "missing")).has_value());
  (void)RemoveTree(dir);
}

}  // namespace
}  // namespace jaxcc::pipeline
