; convert.ll: conversions (int <-> float, f16, i8/u16 loads and stores), min/max, compares and a
; divergent if with loads of other widths (b64, u8, i16).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.minnum.f32(float, float)
declare float @llvm.floor.f32(float)

define amdgpu_kernel void @convert(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a,
                                   ptr addrspace(1) noalias readonly %b, ptr addrspace(1) noalias %c) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i32 %tx
  %x = load float, ptr addrspace(1) %pa, align 4
  %pb = getelementptr inbounds i8, ptr addrspace(1) %b, i32 %tx
  %bb = load i8, ptr addrspace(1) %pb, align 1
  %bi = zext i8 %bb to i32
  %bf = uitofp i32 %bi to float
  %m = call float @llvm.maxnum.f32(float %x, float %bf)
  %n = call float @llvm.minnum.f32(float %m, float 100.0)
  %fl = call float @llvm.floor.f32(float %n)
  %ii = fptosi float %fl to i32
  %si = sitofp i32 %ii to float
  %h = fptrunc float %si to half
  %hb = bitcast half %h to i16
  %pc = getelementptr inbounds i16, ptr addrspace(1) %c, i32 %tx
  store i16 %hb, ptr addrspace(1) %pc, align 2
  %big = fcmp ogt float %x, 10.0
  br i1 %big, label %then, label %exit
then:
  %p64 = getelementptr inbounds i64, ptr addrspace(1) %out, i32 %tx
  %w = sext i32 %ii to i64
  %w2 = mul i64 %w, 12345678901
  store i64 %w2, ptr addrspace(1) %p64, align 8
  br label %exit
exit:
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
