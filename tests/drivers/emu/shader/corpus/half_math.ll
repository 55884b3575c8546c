; half_math.ll: f16 loads and stores, native f16 arithmetic, and f32 transcendentals (fast and precise).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.exp2.f32(float)
declare float @llvm.log2.f32(float)
declare float @llvm.sqrt.f32(float)
declare half @llvm.sqrt.f16(half)
declare half @llvm.fma.f16(half, half, half)

define amdgpu_kernel void @half_ops(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %i64 = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %i64
  %x = load half, ptr addrspace(1) %pa, align 2
  %y = fmul half %x, 0xH3C00
  %z = fadd half %y, %x
  %w = call half @llvm.fma.f16(half %z, half %x, half 0xH4000)
  %ab = call half @llvm.fabs.f16(half %w)
  %q = call half @llvm.sqrt.f16(half %ab)
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %i64
  store half %q, ptr addrspace(1) %po, align 2
  ret void
}
declare half @llvm.fabs.f16(half)

define amdgpu_kernel void @f32_fast(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %i64 = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %i64
  %h = load half, ptr addrspace(1) %pa, align 2
  %x = fpext half %h to float
  %e = call afn float @llvm.exp2.f32(float %x)
  %l = call afn float @llvm.log2.f32(float %e)
  %s = call afn float @llvm.sqrt.f32(float %e)
  %r = fdiv afn float 1.0, %s
  %t = fadd float %l, %r
  %th = fptrunc float %t to half
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %i64
  store half %th, ptr addrspace(1) %po, align 2
  ret void
}

define amdgpu_kernel void @f32_precise(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %i64 = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %i64
  %x = load float, ptr addrspace(1) %pa, align 4
  %s = call float @llvm.sqrt.f32(float %x)
  %d = fdiv float %x, 3.0
  %e = call float @llvm.exp2.f32(float %d)
  %t = fadd float %s, %e
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %i64
  store float %t, ptr addrspace(1) %po, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
