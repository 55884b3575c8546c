; packed_half.ll: <2 x half> arithmetic (v_pk_fma_f16, v_pk_mul_f16, v_pk_add_f16), an f16 dot product
; into f32 (llvm.amdgcn.fdot2: v_dot2_f32_f16) and a max / min of halves.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.amdgcn.fdot2(<2 x half>, <2 x half>, float, i1)
declare <2 x half> @llvm.fma.v2f16(<2 x half>, <2 x half>, <2 x half>)
declare <2 x half> @llvm.maxnum.v2f16(<2 x half>, <2 x half>)

define amdgpu_kernel void @packed_half(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %dot,
                                       ptr addrspace(1) noalias readonly %a, ptr addrspace(1) noalias readonly %b) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr inbounds <2 x half>, ptr addrspace(1) %a, i32 %tx
  %pb = getelementptr inbounds <2 x half>, ptr addrspace(1) %b, i32 %tx
  %x = load <2 x half>, ptr addrspace(1) %pa, align 4
  %y = load <2 x half>, ptr addrspace(1) %pb, align 4
  %m = fmul <2 x half> %x, %y
  %s = fadd <2 x half> %m, <half 0xH3C00, half 0xHC000>
  %f = call <2 x half> @llvm.fma.v2f16(<2 x half> %s, <2 x half> %y, <2 x half> %x)
  %mx = call <2 x half> @llvm.maxnum.v2f16(<2 x half> %f, <2 x half> %y)
  %po = getelementptr inbounds <2 x half>, ptr addrspace(1) %out, i32 %tx
  store <2 x half> %mx, ptr addrspace(1) %po, align 4
  %d = call float @llvm.amdgcn.fdot2(<2 x half> %x, <2 x half> %y, float 0.5, i1 false)
  %pd = getelementptr inbounds float, ptr addrspace(1) %dot, i32 %tx
  store float %d, ptr addrspace(1) %pd, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
