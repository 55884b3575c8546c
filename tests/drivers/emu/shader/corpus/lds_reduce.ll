; lds_reduce.ll: a 128-thread (4-wave) workgroup sums 128 floats through LDS, with a barrier in a loop.
target triple = "amdgcn-amd-amdhsa"

@lds = internal unnamed_addr addrspace(3) global [128 x float] undef, align 16

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @lds_reduce(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 7
  %idx = add nuw nsw i32 %base, %lid
  %idx64 = zext i32 %idx to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx64
  %v = load float, ptr addrspace(1) %pa, align 4
  %lp = getelementptr inbounds [128 x float], ptr addrspace(3) @lds, i32 0, i32 %lid
  store float %v, ptr addrspace(3) %lp, align 4
  br label %loop
loop:
  %s = phi i32 [ 64, %entry ], [ %snext, %latch ]
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %active = icmp ult i32 %lid, %s
  br i1 %active, label %body, label %latch
body:
  %other = add nuw nsw i32 %lid, %s
  %op = getelementptr inbounds [128 x float], ptr addrspace(3) @lds, i32 0, i32 %other
  %x = load float, ptr addrspace(3) %lp, align 4
  %y = load float, ptr addrspace(3) %op, align 4
  %z = fadd float %x, %y
  store float %z, ptr addrspace(3) %lp, align 4
  br label %latch
latch:
  %snext = lshr i32 %s, 1
  %done = icmp eq i32 %snext, 0
  br i1 %done, label %fin, label %loop
fin:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %is0 = icmp eq i32 %lid, 0
  br i1 %is0, label %store, label %exit
store:
  %r = load float, ptr addrspace(3) @lds, align 16
  %gid64 = zext i32 %gid to i64
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %gid64
  store float %r, ptr addrspace(1) %po, align 4
  br label %exit
exit:
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="128,128" }
