; flat.ll: generic (flat) pointers: kernel arguments llc leaves generic, and a pointer that is LDS or
; global depending on the lane, so flat loads reach LDS through the shared aperture (src_shared_base).
target triple = "amdgcn-amd-amdhsa"

@lds = internal unnamed_addr addrspace(3) global [32 x float] undef, align 4

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @flat(ptr %out, ptr %a) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr inbounds float, ptr %a, i32 %tx
  %x = load float, ptr %pa, align 4
  %lp = getelementptr inbounds [32 x float], ptr addrspace(3) @lds, i32 0, i32 %tx
  %y = fmul float %x, 3.0
  store float %y, ptr addrspace(3) %lp, align 4
  %glp = addrspacecast ptr addrspace(3) %lp to ptr
  %odd = and i32 %tx, 1
  %c = icmp eq i32 %odd, 1
  %p = select i1 %c, ptr %glp, ptr %pa
  %v = load volatile float, ptr %p, align 4
  %po = getelementptr inbounds float, ptr %out, i32 %tx
  store float %v, ptr %po, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
