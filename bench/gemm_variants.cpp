// gemm_variants: f32 GEMM register-block variants of the row-block kernel
// (codegen/lower_matmul_rowblock.cpp), generated here with their parameters exposed and run side
// by side in one process on the first Vulkan device, so that ratios between variants survive
// the drift of a shared machine. Each variant is compiled like Kiln's kernels (glslang +
// spirv-opt's performance recipe, codegen/spirv.h), dispatched on the same buffers (operands
// as rgba32f texel buffers or vec4 storage buffers), checked against a CPU product on sampled
// rows, and timed in interleaved rounds (submission to fence). docs/perf.md has the figures.
//
//   gemm_variants [n = 1024] [rounds = 9] [m = n] [k = n]   (C = [m, n], A = [m, k])
#include <vulkan/vulkan.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codegen/spirv.h"

namespace {

struct Variant {
  std::string name;
  bool abt = false;        // C = A·Bᵀ (B is [N, K]); else A·B (B is [K, N])
  uint32_t rows = 32;      // rows per invocation: below 8, or a multiple of 8 (lanes sharing A)
  uint32_t cols = 1;       // per invocation: vec4 columns (A·B) or scalar columns (A·Bᵀ)
  uint32_t local = 64;     // invocations per workgroup
  bool rows_outer = true;  // unrolled body: rows outer, K lanes inner (else K lanes outer)
  bool scalar_acc = true;  // A·B: 4 float accumulators per vec4 column (else one vec4)
  bool texel = true;       // operands as rgba32f texel buffers (else vec4 storage buffers)
};

std::string str(uint32_t v) {
  return std::to_string(v);
}

/// The variant's compute shader. Bindings: 0 C (vec4 for A·B, float for A·Bᵀ), 1 A, 2 B as
/// vec4 storage buffers, 3 A, 4 B as rgba32f texel buffers; push constants M, N, K.
std::string shader(const Variant& v) {
  const uint32_t groups = (v.rows + 7) / 8;
  std::string s = "#version 450\n#extension GL_KHR_shader_subgroup_basic : require\n";
  s += "#extension GL_KHR_shader_subgroup_shuffle : require\n";
  s += "layout(local_size_x = " + str(v.local) + ") in;\n";
  s += std::string("layout(std430, binding = 0) buffer C_ { ") + (v.abt ? "float" : "vec4") +
       " data[]; } c;\n";
  s += "layout(std430, binding = 1) readonly buffer A_ { vec4 data[]; } a;\n";
  s += "layout(std430, binding = 2) readonly buffer B_ { vec4 data[]; } b;\n";
  s += "layout(binding = 3, rgba32f) uniform readonly imageBuffer ta;\n";
  s += "layout(binding = 4, rgba32f) uniform readonly imageBuffer tb;\n";
  s += "layout(push_constant) uniform P { uint M, N, K; } pc;\n";
  s += v.texel ? "#define LA(i) imageLoad(ta, int(i))\n#define LB(i) imageLoad(tb, int(i))\n"
               : "#define LA(i) a.data[i]\n#define LB(i) b.data[i]\n";
  s += "void blk(uint rb, uint cb) {\n";
  s += "  const uint x = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID;\n";
  s += std::string("  const uint W = ") + (v.abt ? "pc.N" : "pc.N / 4u") +
       ", K4 = pc.K / 4u, i0 = rb * " + str(v.rows) + "u;\n";
  for (uint32_t g = 0; g < groups; ++g)
    s += "  const uint ar" + str(g) + " = min(i0 + " + str(8 * g) + "u + lane, pc.M - 1u) * K4;\n";
  for (uint32_t c = 0; c < v.cols; ++c) {
    s += "  const uint j" + str(c) + " = cb * " + str(v.local * v.cols) + "u + " +
         str(c * v.local) + "u + x;\n";
    s += "  const uint jc" + str(c) + " = min(j" + str(c) + ", W - 1u)" + (v.abt ? " * K4" : "") +
         ";\n";
  }
  const bool split = !v.abt && v.scalar_acc;  // 4 scalar accumulators per vec4 column
  auto acc = [](uint32_t r, uint32_t c) { return "c" + str(r) + "_" + str(c); };
  for (uint32_t r = 0; r < v.rows; ++r)
    for (uint32_t c = 0; c < v.cols; ++c) {
      if (v.abt) {
        s += "  float " + acc(r, c) + " = 0.0;\n";
      } else if (split) {
        for (uint32_t l = 0; l < 4; ++l) s += "  float " + acc(r, c) + "_" + str(l) + " = 0.0;\n";
      } else {
        s += "  vec4 " + acc(r, c) + " = vec4(0.0);\n";
      }
    }
  s += "  for (uint k = 0u; k < K4; ++k) {\n";
  for (uint32_t g = 0; g < groups; ++g)
    s += "    const vec4 al" + str(g) + " = LA(ar" + str(g) + " + k);\n";
  for (uint32_t kk = 0; kk < (v.abt ? 1u : 4u); ++kk)
    for (uint32_t c = 0; c < v.cols; ++c)
      s += v.abt ? "    const vec4 bv" + str(c) + " = LB(jc" + str(c) + " + k);\n"
                 : "    const vec4 bv" + str(c) + "_" + str(kk) + " = LB((k * 4u + " + str(kk) +
                       "u) * W + jc" + str(c) + ");\n";
  auto step = [&](uint32_t r, uint32_t kk) {
    s += "    { const float av = subgroupShuffle(al" + str(r / 8) + "[" + str(kk) + "], " +
         str(r % 8) + "u);";
    for (uint32_t c = 0; c < v.cols; ++c) {
      const std::string a = acc(r, c);
      if (v.abt) {
        s += " " + a + " = fma(av, bv" + str(c) + "[" + str(kk) + "], " + a + ");";
      } else if (split) {
        for (uint32_t l = 0; l < 4; ++l)
          s += " " + a + "_" + str(l) + " = fma(av, bv" + str(c) + "_" + str(kk) + "[" + str(l) +
               "], " + a + "_" + str(l) + ");";
      } else {
        s += " " + a + " = fma(vec4(av), bv" + str(c) + "_" + str(kk) + ", " + a + ");";
      }
    }
    s += " }\n";
  };
  for (uint32_t o = 0; o < (v.rows_outer ? v.rows : 4u); ++o)
    for (uint32_t i = 0; i < (v.rows_outer ? 4u : v.rows); ++i)
      v.rows_outer ? step(o, i) : step(i, o);
  s += "  }\n";
  for (uint32_t r = 0; r < v.rows; ++r) {
    s += "  if (i0 + " + str(r) + "u < pc.M) {";
    for (uint32_t c = 0; c < v.cols; ++c) {
      const std::string a = acc(r, c);
      const std::string value =
          split ? "vec4(" + a + "_0, " + a + "_1, " + a + "_2, " + a + "_3)" : a;
      s += " if (j" + str(c) + " < W) c.data[(i0 + " + str(r) + "u) * W + j" + str(c) +
           "] = " + value + ";";
    }
    s += " }\n";
  }
  s += "}\nvoid main() {\n";
  s += "  const uint RB = (pc.M + " + str(v.rows - 1) + "u) / " + str(v.rows) + "u;\n";
  s += std::string("  const uint CB = (") + (v.abt ? "pc.N" : "pc.N / 4u") + " + " +
       str(v.local * v.cols - 1) + "u) / " + str(v.local * v.cols) + "u;\n";
  s += "  for (uint rb = gl_WorkGroupID.y; rb < RB; rb += gl_NumWorkGroups.y)\n";
  s += "    for (uint cb = gl_WorkGroupID.x; cb < CB; cb += gl_NumWorkGroups.x) blk(rb, cb);\n}\n";
  return s;
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) {
    std::fprintf(stderr, "gemm_variants: %s failed (%d)\n", what, static_cast<int>(r));
    std::exit(1);
  }
}

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  float* data = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 1024;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  const uint32_t m = argc > 3 ? static_cast<uint32_t>(std::atoi(argv[3])) : n;
  const uint32_t kk = argc > 4 ? static_cast<uint32_t>(std::atoi(argv[4])) : n;
  if (n == 0 || n % 4 != 0 || rounds <= 0 || m == 0 || kk == 0 || kk % 4 != 0) {
    std::fprintf(stderr,
                 "usage: gemm_variants [n, a multiple of 4] [rounds] [m] [k, a multiple of 4]\n");
    return 2;
  }
  // Before: the kernel as it was until 2026-12-03 (16 × 2, K lanes outer, vec4 accumulators);
  // kept: what codegen generates now.
  std::vector<Variant> variants = {
      {"A·B before: 16x2 vec4, K outer, vec4 acc", false, 16, 2, 64, false, false, true},
      {"A·B kept: 32x1 vec4, rows outer", false, 32, 1, 64, true, true, true},
      {"A·B 32x1, rows outer, vec4 acc", false, 32, 1, 64, true, false, true},
      {"A·B 48x1, rows outer", false, 48, 1, 64, true, true, true},
      {"A·B 16x2, rows outer", false, 16, 2, 64, true, true, true},
      {"A·B 16x1, rows outer", false, 16, 1, 64, true, true, true},
      {"A·B 8x1, rows outer", false, 8, 1, 64, true, true, true},
      {"A·B 4x1, rows outer", false, 4, 1, 64, true, true, true},
      {"A·B 32x1, storage buffers", false, 32, 1, 64, true, true, false},
      {"A·Bt before: 16x4, K outer", true, 16, 4, 32, false, true, true},
      {"A·Bt kept: 32x4, rows outer", true, 32, 4, 32, true, true, true},
      {"A·Bt 40x4, rows outer", true, 40, 4, 32, true, true, true},
      {"A·Bt 16x8, rows outer", true, 16, 8, 32, true, true, true},
      {"A·Bt 16x4, rows outer", true, 16, 4, 32, true, true, true},
      {"A·Bt 8x4, rows outer", true, 8, 4, 32, true, true, true},
      {"A·Bt 4x4, rows outer", true, 4, 4, 32, true, true, true},
      {"A·Bt 1x4, rows outer", true, 1, 4, 32, true, true, true},
      {"A·Bt 32x2, rows outer", true, 32, 2, 32, true, true, true},
      {"A·Bt 16x2, rows outer", true, 16, 2, 32, true, true, true},
      {"A·Bt 8x2, rows outer", true, 8, 2, 32, true, true, true},
      {"A·Bt 8x1, rows outer", true, 8, 1, 32, true, true, true},
  };

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  check(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance");
  uint32_t count = 1;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  if (vkEnumeratePhysicalDevices(instance, &count, &pd) < 0 || count == 0) {
    std::fprintf(stderr, "gemm_variants: no Vulkan device\n");
    return 1;
  }
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  const float priority = 1.f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;  // queue family 0: compute on the devices this targets
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkDevice dev = VK_NULL_HANDLE;
  check(vkCreateDevice(pd, &dci, nullptr, &dev), "vkCreateDevice");
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(dev, 0, 0, &queue);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);

  const VkDeviceSize bytes =
      std::max({VkDeviceSize{m} * kk, VkDeviceSize{n} * kk, VkDeviceSize{m} * n}) * 4;
  auto make = [&](Buffer& b) {
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = bytes;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT;
    check(vkCreateBuffer(dev, &bi, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, b.buffer, &req);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = 0;
    while (type < mem.memoryTypeCount && !((req.memoryTypeBits >> type & 1u) &&
                                           (mem.memoryTypes[type].propertyFlags & want) == want))
      ++type;
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    check(vkAllocateMemory(dev, &mai, nullptr, &b.memory), "vkAllocateMemory");
    check(vkBindBufferMemory(dev, b.buffer, b.memory, 0), "vkBindBufferMemory");
    void* p = nullptr;
    check(vkMapMemory(dev, b.memory, 0, bytes, 0, &p), "vkMapMemory");
    b.data = static_cast<float*>(p);
  };
  Buffer a, b, c;
  make(a);
  make(b);
  make(c);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < size_t{m} * kk; ++i) a.data[i] = dist(rng);
  for (size_t i = 0; i < size_t{n} * kk; ++i) b.data[i] = dist(rng);
  auto view = [&](const Buffer& buf) {
    VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    vi.buffer = buf.buffer;
    vi.format = VK_FORMAT_R32G32B32A32_SFLOAT;
    vi.range = bytes;
    VkBufferView v = VK_NULL_HANDLE;
    check(vkCreateBufferView(dev, &vi, nullptr, &v), "vkCreateBufferView (rgba32f texel)");
    return v;
  };
  const VkBufferView views[2] = {view(a), view(b)};

  VkDescriptorSetLayoutBinding lb[5] = {};
  for (uint32_t i = 0; i < 5; ++i) {
    lb[i].binding = i;
    lb[i].descriptorCount = 1;
    lb[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    lb[i].descriptorType =
        i < 3 ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
  }
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.bindingCount = 5;
  dl.pBindings = lb;
  VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
  check(vkCreateDescriptorSetLayout(dev, &dl, nullptr, &dsl), "vkCreateDescriptorSetLayout");
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 16};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &dsl;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  check(vkCreatePipelineLayout(dev, &pli, nullptr, &layout), "vkCreatePipelineLayout");
  const VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3},
                                         {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, 2}};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 2;
  dpi.pPoolSizes = sizes;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  check(vkCreateDescriptorPool(dev, &dpi, nullptr, &pool), "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &dsl;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(dev, &dai, &set), "vkAllocateDescriptorSets");
  const VkDescriptorBufferInfo infos[3] = {
      {c.buffer, 0, VK_WHOLE_SIZE}, {a.buffer, 0, VK_WHOLE_SIZE}, {b.buffer, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet writes[5] = {};
  for (uint32_t i = 0; i < 5; ++i) {
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = lb[i].descriptorType;
    if (i < 3)
      writes[i].pBufferInfo = &infos[i];
    else
      writes[i].pTexelBufferView = &views[i - 3];
  }
  vkUpdateDescriptorSets(dev, 5, writes, 0, nullptr);
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  VkCommandPool cpool = VK_NULL_HANDLE;
  check(vkCreateCommandPool(dev, &cpi, nullptr, &cpool), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = cpool;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(dev, &cai, &cmd), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  check(vkCreateFence(dev, &fci, nullptr, &fence), "vkCreateFence");

  std::vector<VkPipeline> pipelines;
  for (const Variant& v : variants) {
    auto spirv = kiln::compile_glsl(shader(v), "gemm_variant");
    if (!spirv.ok()) {
      std::fprintf(stderr, "%s: %s\n", v.name.c_str(), spirv.status().message().c_str());
      return 1;
    }
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = spirv->size() * 4;
    smi.pCode = spirv->data();
    VkShaderModule module = VK_NULL_HANDLE;
    check(vkCreateShaderModule(dev, &smi, nullptr, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo pci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pci.layout = layout;
    pci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pci.stage.module = module;
    pci.stage.pName = "main";
    VkPipeline pipeline = VK_NULL_HANDLE;
    check(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &pci, nullptr, &pipeline),
          "vkCreateComputePipelines");
    vkDestroyShaderModule(dev, module, nullptr);
    pipelines.push_back(pipeline);
  }

  const uint32_t push[4] = {m, n, kk, 0};
  auto run = [&](size_t i) {
    const Variant& v = variants[i];
    const uint32_t width = v.abt ? n : n / 4;
    const uint32_t gx = (width + v.local * v.cols - 1) / (v.local * v.cols);
    const uint32_t gy = std::min(65535u, (m + v.rows - 1) / v.rows);  // the shader loops
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[i]);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), push);
    vkCmdDispatch(cmd, gx, gy, 1);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    const auto t0 = std::chrono::steady_clock::now();
    check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
    check(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    check(vkResetFences(dev, 1, &fence), "vkResetFences");
    check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
    return ms;
  };

  // Untimed first call of each (LLVM compile at first dispatch), checked on sampled rows.
  const std::vector<uint32_t> rows = {0, 1, 7, 8, 31, 32, m / 2 + 3, m - 1};
  bool ok = true;
  for (size_t i = 0; i < variants.size(); ++i) {
    const bool abt = variants[i].abt;
    std::memset(c.data, 0, bytes);
    run(i);
    double err = 0;
    for (uint32_t r : rows) {
      if (r >= m) continue;
      for (uint32_t j = 0; j < n; ++j) {
        double want = 0;
        for (uint32_t k = 0; k < kk; ++k)
          want += double{a.data[size_t{r} * kk + k]} *
                  (abt ? b.data[size_t{j} * kk + k] : b.data[size_t{k} * n + j]);
        err = std::max(err, std::fabs(want - c.data[size_t{r} * n + j]));
      }
    }
    if (err > 1e-5 * kk) {
      std::fprintf(stderr, "%s: max error %.3g on sampled rows\n", variants[i].name.c_str(), err);
      ok = false;
    }
  }
  std::vector<std::vector<double>> times(variants.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < variants.size(); ++i) times[i].push_back(run(i));

  std::printf("%s, f32 %ux%ux%u, median of %d interleaved rounds\n", props.deviceName, m, n, kk,
              rounds);
  const double flop =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(kk);
  double before = 0;
  for (size_t i = 0; i < variants.size(); ++i) {
    std::vector<double>& t = times[i];
    std::sort(t.begin(), t.end());
    const double med = t[t.size() / 2];
    if (variants[i].name.find("before") != std::string::npos) before = med;
    std::printf("  %-44s %8.2f ms  %7.2f GFLOP/s  %.2fx before\n", variants[i].name.c_str(), med,
                flop / med / 1e6, before / med);
  }
  vkDeviceWaitIdle(dev);
  return ok ? 0 : 1;
}
