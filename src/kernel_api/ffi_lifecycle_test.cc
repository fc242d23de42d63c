// The FFI lifecycle in generated handlers (ffi_frame.h, ffi_context.h) against a fake XLA_FFI_Api
// the test controls: the pool handed to functions that take one, state registration, the
// instantiate stage and its errors, and asynchronous calls. The async test needs no timing: the
// kernel waits (bounded) for a flag the test sets only after the handler returned, so a handler
// that blocked until its kernel finished fails it.
#include <gtest/gtest.h>

#if __has_include("xla/ffi/api/c_api.h")

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "jaxcc/detail/ffi_frame.h"
#include "kernel_api/fake_xla_error_for_test.h"
#include "kernel_api/one_buffer_frame_for_test.h"

struct XLA_FFI_Future {
  std::atomic<int> done{0};  // 1 available, 2 error
  std::string error;
};

namespace jaxcc::detail {
namespace {

struct Fake {
  static inline std::vector<std::thread> threads;
  static inline bool refuse_schedule = false;
  static inline int type_registrations = 0;
  static inline void* state = nullptr;
  static inline bool fail_state_set = false;
  static inline int deleted = 0;
};

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }
XLA_FFI_Error* NumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  *args->num_threads = 3;
  return nullptr;
}
XLA_FFI_Error* Schedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  if (Fake::refuse_schedule) return new XLA_FFI_Error{9, "no pool"};
  Fake::threads.emplace_back(args->task, args->data);
  return nullptr;
}
XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  args->future = new XLA_FFI_Future;
  return nullptr;
}
XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  args->future->done = 1;
  return nullptr;
}
XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  args->future->error = args->error->message;
  delete args->error;
  args->future->done = 2;
  return nullptr;
}
XLA_FFI_Error* TypeRegister(XLA_FFI_Type_Register_Args* args) {
  ++Fake::type_registrations;
  args->type_id->type_id = 42;
  return nullptr;
}
XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  if (args->stage != XLA_FFI_ExecutionStage_INSTANTIATE || args->type_id->type_id != 42) {
    return new XLA_FFI_Error{3, "bad State_Set"};
  }
  if (Fake::fail_state_set) return new XLA_FFI_Error{9, "state already set"};
  Fake::state = args->state;
  return nullptr;
}
XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  if (Fake::state == nullptr) return new XLA_FFI_Error{5, "State is not set"};
  args->state = Fake::state;
  return nullptr;
}

struct Frame : fake_xla::OneBufferFrame {
  explicit Frame(XLA_FFI_ExecutionStage stage = XLA_FFI_ExecutionStage_EXECUTE)
      : OneBufferFrame(fake_xla::Attribute::kN, stage) {
    api.XLA_FFI_Error_Destroy = ErrorDestroy;
    api.XLA_FFI_ThreadPool_NumThreads = NumThreads;
    api.XLA_FFI_ThreadPool_Schedule = Schedule;
    api.XLA_FFI_Future_Create = FutureCreate;
    api.XLA_FFI_Future_SetAvailable = FutureSetAvailable;
    api.XLA_FFI_Future_SetError = FutureSetError;
    api.XLA_FFI_Type_Register = TypeRegister;
    api.XLA_FFI_State_Set = StateSet;
    api.XLA_FFI_State_Get = StateGet;
  }
};

void JoinThreads() {
  for (std::thread& t : Fake::threads) t.join();
  Fake::threads.clear();
}

constexpr const char* kArgNames[] = {"x"};
constexpr const char* kRetNames[] = {"y"};
constexpr FrameAttr kAttrs[] = {{"n", FrameScalar::kS64, 0}};

constexpr FrameSpec kPlain = {"plain", 1, 1, 1, kArgNames, kRetNames, kAttrs, false, 0};
constexpr FrameSpec kPool = {"pooled", 1, 1, 1, kArgNames, kRetNames, kAttrs, false, 0, true};
constexpr FrameSpec kAsync = {"later", 1,     1, 1,     kArgNames, kRetNames,
                              kAttrs,  false, 0, false, nullptr,   true};

std::unique_ptr<XLA_FFI_Error> Own(XLA_FFI_Error* e) { return std::unique_ptr<XLA_FFI_Error>(e); }

// What a generated handler does: room for the decoded call on its stack, then the decoder.
XLA_FFI_Error* Handle(XLA_FFI_CallFrame* frame, const FrameSpec& spec, FrameBody body,
                      FrameInstantiate instantiate = nullptr) {
  FrameRoom<1, 1, 1> room;
  return RunFrameWith<NoCallScope>(frame, spec, body, instantiate, room.slots());
}

TEST(FfiLifecycle, OnlyAFunctionWithAPoolParameterGetsOne) {
  for (const FrameSpec* spec : {&kPlain, &kPool}) {
    Frame f;
    ThreadPool* seen = reinterpret_cast<ThreadPool*>(1);
    int64_t threads = 0;
    static ThreadPool** out_seen;
    static int64_t* out_threads;
    out_seen = &seen;
    out_threads = &threads;
    ASSERT_EQ(Own(Handle(&f.frame, *spec,
                         [](auto& call) {
                           *out_seen = call.context->pool;
                           if (call.context->pool) *out_threads = call.context->pool->num_threads();
                         })),
              nullptr);
    if (spec == &kPool) {
      ASSERT_NE(seen, nullptr);
      EXPECT_EQ(threads, 3);
    } else {
      EXPECT_EQ(seen, nullptr);
    }
  }
}

TEST(FfiLifecycle, AsyncHandlerReturnsBeforeItsKernelEnds) {
  static std::atomic<bool> released{false};
  static std::atomic<bool> timed_out{false};
  released = false;
  timed_out = false;
  Frame f;
  auto error = Own(Handle(&f.frame, kAsync, [](auto& call) {
    // Waits for the test to release it, which happens only after the handler returned.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!released.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    call.rets[0].template data_ptr<float>()[0] = 7.0f;
  }));
  ASSERT_EQ(error, nullptr);
  ASSERT_NE(f.frame.future, nullptr);
  EXPECT_EQ(f.frame.future->done.load(), 0);  // not complete: the kernel is still waiting
  released = true;
  JoinThreads();
  EXPECT_FALSE(timed_out.load()) << "the handler blocked until its kernel finished";
  EXPECT_EQ(f.frame.future->done.load(), 1);
  EXPECT_EQ(f.out[0], 7.0f);
  delete f.frame.future;
}

TEST(FfiLifecycle, AsyncKernelErrorsFailTheFutureWithTheFunctionsName) {
  Frame f;
  ASSERT_EQ(Own(Handle(&f.frame, kAsync, [](auto&) { throw std::invalid_argument("too small"); })),
            nullptr);
  JoinThreads();
  EXPECT_EQ(f.frame.future->done.load(), 2);
  EXPECT_EQ(f.frame.future->error, "later: too small");
  delete f.frame.future;
}

TEST(FfiLifecycle, AsyncRunsInPlaceWhenThePoolRefusesTheTask) {
  Fake::refuse_schedule = true;
  Frame f;
  ASSERT_EQ(Own(Handle(&f.frame, kAsync,
                       [](auto& call) { call.rets[0].template data_ptr<float>()[1] = 3; })),
            nullptr);
  Fake::refuse_schedule = false;
  EXPECT_EQ(f.frame.future->done.load(), 1);
  EXPECT_EQ(f.out[1], 3.0f);
  delete f.frame.future;
}

// A state type: the kernel unit's factory and deleter, as generated.
FrameTypeId g_type = {0};
void DeleteInt(void* p) noexcept {
  ++Fake::deleted;
  delete static_cast<std::int64_t*>(p);
}
constexpr FrameTypeInfo kInfo = {sizeof(FrameTypeInfo), nullptr, &DeleteInt};
constexpr FrameStateType kStateType = {&g_type, &kInfo};
constexpr FrameSpec kStateful = {"stateful", 1,     1, 1,     kArgNames,  kRetNames,
                                 kAttrs,     false, 0, false, &kStateType};

XLA_FFI_Error* RunStateful(Frame& f, bool throw_in_factory = false) {
  static bool throws;
  throws = throw_in_factory;
  return Handle(
      &f.frame, kStateful,
      [](auto& call) {
        call.rets[0].template data_ptr<float>()[0] =
            static_cast<float>(*static_cast<std::int64_t*>(call.context->state));
      },
      [](auto& call) -> void* {
        if (throws) throw std::invalid_argument("n must be even");
        return new std::int64_t(call.template attr<std::int64_t>(0) * 10);
      });
}

TEST(FfiLifecycle, StateIsRegisteredBuiltAtInstantiateAndFetchedPerExecution) {
  Fake::state = nullptr;
  // Metadata query: the type is registered once and its id reported.
  Frame meta;
  XLA_FFI_Metadata metadata{XLA_FFI_Metadata_STRUCT_SIZE, {}, 0, XLA_FFI_UNKNOWN_TYPE_ID};
  XLA_FFI_Metadata_Extension extension{
      {XLA_FFI_Metadata_Extension_STRUCT_SIZE, XLA_FFI_Extension_Metadata, nullptr}, &metadata};
  meta.frame.extension_start = &extension.extension_base;
  ASSERT_EQ(Own(RunStateful(meta)), nullptr);
  EXPECT_EQ(metadata.state_type_id.type_id, 42);
  ASSERT_EQ(Own(RunStateful(meta)), nullptr);
  EXPECT_EQ(Fake::type_registrations, 1);

  Frame instantiate(XLA_FFI_ExecutionStage_INSTANTIATE);
  ASSERT_EQ(Own(RunStateful(instantiate)), nullptr);
  ASSERT_NE(Fake::state, nullptr);
  Frame execute;
  ASSERT_EQ(Own(RunStateful(execute)), nullptr);
  EXPECT_EQ(execute.out[0], 50.0f);
  DeleteInt(Fake::state);  // what XLA does with the executable
  Fake::state = nullptr;
}

TEST(FfiLifecycle, AFactoryThatThrowsIsAnErrorNamingTheFunctionAndTheStage) {
  Frame instantiate(XLA_FFI_ExecutionStage_INSTANTIATE);
  auto error = Own(RunStateful(instantiate, /*throw_in_factory=*/true));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error->message.find("stateful: n must be even"), std::string::npos);
  EXPECT_NE(error->message.find("instantiate stage"), std::string::npos);
  EXPECT_EQ(Fake::state, nullptr);
}

TEST(FfiLifecycle, StateThatXlaRefusesIsDeletedNotLeaked) {
  Fake::fail_state_set = true;
  int before = Fake::deleted;
  Frame instantiate(XLA_FFI_ExecutionStage_INSTANTIATE);
  auto error = Own(RunStateful(instantiate));
  Fake::fail_state_set = false;
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(Fake::deleted, before + 1);
}

TEST(FfiLifecycle, ExecutionWithoutStateIsAnError) {
  Fake::state = nullptr;
  Frame execute;
  auto error = Own(RunStateful(execute));
  ASSERT_NE(error, nullptr);
  EXPECT_NE(error->message.find("State is not set"), std::string::npos);
}

TEST(FfiLifecycle, StatelessFunctionsRefuseTheInstantiateStage) {
  Frame instantiate(XLA_FFI_ExecutionStage_INSTANTIATE);
  auto error = Own(Handle(&instantiate.frame, kPlain, [](auto&) {}));
  ASSERT_NE(error, nullptr);
  EXPECT_NE(error->message.find("Wrong execution stage"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::detail

#else
TEST(FfiLifecycle, SkippedWithoutXlaFfiHeaders) {
  GTEST_SKIP() << "xla/ffi/api/c_api.h not found (jax.ffi.include_dir())";
}
#endif
