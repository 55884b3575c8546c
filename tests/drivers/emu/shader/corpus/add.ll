; add.ll: out[i] = a[i] + b[i] with a bounds check on n (one workgroup of 64 per 64 elements).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @add(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a,
                               ptr addrspace(1) noalias readonly %b, i32 %n) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 6
  %i = add nuw nsw i32 %base, %lid
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %i64 = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %i64
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %i64
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %i64
  %x = load float, ptr addrspace(1) %pa, align 4
  %y = load float, ptr addrspace(1) %pb, align 4
  %z = fadd float %x, %y
  store float %z, ptr addrspace(1) %po, align 4
  br label %exit
exit:
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="64,64" }
